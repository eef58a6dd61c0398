// A legacy MCP server on stdio for the gateway's hardening tests: well-behaved until a tool makes it
// misbehave. What it was given and what it does show through its tools:
//   pid             its process id
//   descriptors     [{fd, target}] of its open descriptors (/proc/self/fd), as it found them at start-up
//   environment     its environment, as an object
//   big             an answer of `bytes` bytes of text (default 20 MiB)
//   say             writes each of `lines` to its stderr, then answers
//   flood           answers, then writes to its stderr without end (long lines among short ones)
//   deaf            answers, then never reads its stdin again
//   hang            never answers
//   slow_progress   answers after `total_ms`, sending progress every `every_ms` meanwhile (when asked for it)
import { readdirSync, readlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';

// Before Node opens anything of its own beyond what it needs to start.
const descriptors = readdirSync('/proc/self/fd').map((fd) => {
  let target = '';
  try {
    target = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // the directory's own descriptor, gone once read
  }
  return { fd: Number(fd), target };
});

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const names = ['pid', 'descriptors', 'environment', 'big', 'say', 'flood', 'deaf', 'hang', 'slow_progress'];
const tools = names.map((name) => ({ name, inputSchema: { type: 'object' } }));

// As fast as the gateway reads, and no faster: when the pipe is full, Node queues what is written, and a
// queue grown without bound ends the process (writev fails with ENOBUFS) instead of flooding.
function flood() {
  let n = 0;
  const next = () => {
    n += 1;
    const line = n % 50 === 0 ? 'L'.repeat(100000) : `flood line ${n}`;
    if (process.stderr.write(line + '\n')) setImmediate(next);
    else process.stderr.once('drain', next);
  };
  next();
}

let deaf = false;
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || m.method === undefined) return; // notifications and answers
  const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      return reply({
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'misbehaving-upstream', version: '1.0.0' },
      });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call':
      break;
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
  const args = m.params?.arguments ?? {};
  switch (m.params?.name) {
    case 'pid':
      return reply(text(String(process.pid)));
    case 'descriptors':
      return reply(text(JSON.stringify(descriptors)));
    case 'environment':
      return reply(text(JSON.stringify(process.env)));
    case 'big':
      return reply(text('x'.repeat(args.bytes ?? 20 * 1024 * 1024)));
    case 'say':
      for (const l of args.lines ?? []) process.stderr.write(l + '\n');
      return reply(text('said'));
    case 'flood':
      reply(text('flooding'));
      return flood();
    case 'deaf':
      reply(text('deaf from now on'));
      deaf = true;
      lines.close();
      process.stdin.pause();
      setInterval(() => {}, 1 << 30); // alive with nothing to read: only a signal ends it
      return;
    case 'hang':
      return;
    case 'slow_progress': {
      const token = m.params?._meta?.progressToken;
      const started = Date.now();
      let step = 0;
      const timer = setInterval(() => {
        step += 1;
        if (token !== undefined)
          send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: step } });
        if (Date.now() - started >= (args.total_ms ?? 2000)) {
          clearInterval(timer);
          reply(text(`done after ${step} steps`));
        }
      }, args.every_ms ?? 200);
      return;
    }
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${m.params?.name}` } });
  }
});
// Its stdin's end is its own: it exits with it (a deaf one never sees it, and is ended by signal).
lines.on('close', () => {
  if (!deaf) process.exit(0);
});
