// An MCP server on stdio for the gateway's notification and pool tests, legacy by default or modern with --modern,
// whose announcements the test drives from outside: every instance (the gateway may start several) follows a
// journal file the test appends to, as instances of a real server follow the state they share.
//
//   node announcing_upstream.mjs LOG JOURNAL [--modern]
//
// Journal lines: `tools` (tools list changed), `resources` (resources list changed), `updated URI` (a
// resource changed; announced to whoever watches it). Each instance writes what the test checks to LOG, one
// line each, prefixed with its pid: `started`, `subscribe URI`, `unsubscribe URI` (legacy resources/subscribe
// and resources/unsubscribe; modern: a listen watching URI began or ended), `gather TAG` (a gather call given
// a tag began).
import { createInterface } from 'node:readline';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

const [logFile, journal] = process.argv.slice(2);
const modern = process.argv.includes('--modern');
const note = (line) => appendFileSync(logFile, `${process.pid} ${line}\n`);
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const modernVersion = '2026-07-28';
const serverInfo = { name: 'announcing-upstream', version: '1.0.0' };
const capabilities = { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } };
const tools = [
  { name: 'pid', description: 'The server process id', inputSchema: { type: 'object' } },
  { name: 'slow_pid', description: 'The server process id, after 300 ms', inputSchema: { type: 'object' } },
  { name: 'crash', description: 'Exits the server mid-call', inputSchema: { type: 'object' } },
  {
    name: 'progress_token',
    description: 'Answers the progressToken the call carried ("none" without one), after one progress step on it',
    inputSchema: { type: 'object' },
  },
  {
    name: 'gather',
    description:
      'Answers "PID together" once `count` gather calls are in flight in this process at once, or "PID alone" ' +
      'after `wait_ms`; logs `tag` as it starts and as it ends (modern: only when the request set logLevel), ' +
      'and notes `gather TAG` in LOG as it starts',
    inputSchema: {
      type: 'object',
      properties: { count: { type: 'integer' }, wait_ms: { type: 'integer' }, tag: { type: 'string' } },
    },
  },
];
const gathering = new Set(); // the release functions of the gather calls in flight
const watched = 'test://watched';

const subscribed = new Set(); // legacy
const listens = new Map(); // modern: JSON of the listen id -> { id, filter }

note('started');

function announce(line) {
  const [what, uri] = line.split(' ');
  const method = {
    tools: 'notifications/tools/list_changed',
    resources: 'notifications/resources/list_changed',
    updated: 'notifications/resources/updated',
  }[what];
  if (!method) return;
  const params = what === 'updated' ? { uri } : {};
  if (!modern) {
    if (what !== 'updated' || subscribed.has(uri)) send({ jsonrpc: '2.0', method, params });
    return;
  }
  for (const { id, filter } of listens.values()) {
    const wanted =
      (what === 'tools' && filter.toolsListChanged) ||
      (what === 'resources' && filter.resourcesListChanged) ||
      (what === 'updated' && (filter.resourceSubscriptions ?? []).includes(uri));
    if (wanted)
      send({ jsonrpc: '2.0', method, params: { ...params, _meta: { 'io.modelcontextprotocol/subscriptionId': id } } });
  }
}

// Only what is appended after the start is news.
let seen = existsSync(journal) ? readFileSync(journal, 'utf8').length : 0;
setInterval(() => {
  if (!existsSync(journal)) return;
  const text = readFileSync(journal, 'utf8');
  if (text.length <= seen) return;
  const news = text.slice(seen);
  seen = text.length;
  for (const line of news.split('\n')) if (line) announce(line);
}, 20);

function endListen(key) {
  const listen = listens.get(key);
  if (!listen) return;
  listens.delete(key);
  for (const uri of listen.filter.resourceSubscriptions ?? []) note(`unsubscribe ${uri}`);
  send({
    jsonrpc: '2.0',
    id: listen.id,
    result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': listen.id } },
  });
}

function gather(m, reply) {
  const { count = 2, wait_ms = 5000, tag } = m.params.arguments ?? {};
  const logs = tag !== undefined && (!modern || m.params?._meta?.['io.modelcontextprotocol/logLevel'] !== undefined);
  if (tag !== undefined) note(`gather ${tag}`); // the test knows the call reached this process
  const log = (when) => {
    if (logs)
      send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'gather', data: `${tag} ${when}` } });
  };
  log('starts');
  let done = false;
  const release = (how) => {
    if (done) return;
    done = true;
    gathering.delete(release);
    clearTimeout(timer);
    log('ends');
    reply({ content: [{ type: 'text', text: `${process.pid} ${how}` }] });
  };
  const timer = setTimeout(() => release('alone'), wait_ms);
  gathering.add(release);
  if (gathering.size >= count) for (const r of [...gathering]) r('together');
}

function serve(m) {
  const reply = (result) =>
    send({ jsonrpc: '2.0', id: m.id, result: modern ? { resultType: 'complete', ...result } : result });
  const fail = (code, message) => send({ jsonrpc: '2.0', id: m.id, error: { code, message } });
  const cacheable = modern ? { ttlMs: 0, cacheScope: 'private' } : {};
  const claimed = m.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  if (modern && claimed !== modernVersion) return fail(-32602, 'this server speaks 2026-07-28 only');
  if (!modern && claimed !== undefined) return fail(-32601, `Method not found: ${m.method}`);
  switch (m.method) {
    case 'initialize':
      if (modern) return fail(-32601, 'Method not found: initialize');
      return reply({ protocolVersion: '2025-11-25', capabilities, serverInfo });
    case 'server/discover':
      if (!modern) return fail(-32601, 'Method not found: server/discover');
      return reply({
        supportedVersions: [modernVersion],
        capabilities,
        ...cacheable,
        _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo },
      });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools, ...cacheable });
    case 'tools/call': {
      const answer = () => reply({ content: [{ type: 'text', text: String(process.pid) }] });
      if (m.params?.name === 'slow_pid') return void setTimeout(answer, 300);
      if (m.params?.name === 'crash') process.exit(1);
      if (m.params?.name === 'gather') return gather(m, reply);
      if (m.params?.name === 'progress_token') {
        const token = m.params?._meta?.progressToken;
        if (token === undefined) return reply({ content: [{ type: 'text', text: 'none' }] });
        send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 1 } });
        return reply({ content: [{ type: 'text', text: JSON.stringify(token) }] });
      }
      return answer();
    }
    case 'resources/list':
      return reply({ resources: [{ uri: watched, name: 'watched' }], ...cacheable });
    case 'resources/read':
      return reply({ contents: [{ uri: m.params.uri, text: 'watched content' }], ...cacheable });
    case 'resources/subscribe':
    case 'resources/unsubscribe': {
      if (modern) return fail(-32601, `Method not found: ${m.method}`);
      const on = m.method === 'resources/subscribe';
      if (on) subscribed.add(m.params.uri);
      else subscribed.delete(m.params.uri);
      note(`${on ? 'subscribe' : 'unsubscribe'} ${m.params.uri}`);
      return reply({});
    }
    case 'subscriptions/listen': {
      if (!modern) return fail(-32601, 'Method not found: subscriptions/listen');
      const filter = m.params.notifications ?? {};
      listens.set(JSON.stringify(m.id), { id: m.id, filter });
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': m.id }, notifications: filter },
      });
      for (const uri of filter.resourceSubscriptions ?? []) note(`subscribe ${uri}`);
      return;
    }
    default:
      return fail(-32601, `Method not found: ${m.method}`);
  }
}

const input = createInterface({ input: process.stdin });
input.on('close', () => process.exit(0)); // EOF: the client is done with this server
input.on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.method === 'notifications/cancelled') return endListen(JSON.stringify(m.params?.requestId));
  if (m.id === undefined || m.method === undefined) return; // other notifications, answers
  serve(m);
});
