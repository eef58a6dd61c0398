// Interop peer: a small MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0, served over
// Node's http by @modelcontextprotocol/node 2.1.2) that answers both eras on one endpoint: modern requests
// through the per-request envelope, legacy ones statelessly. Loopback only; prints its URL on the first
// stdout line and exits when stdin closes. Duet's client tests connect to it in every mode.
//
//   node v2_http_server.mjs [--tls-cert CERT.pem --tls-key KEY.pem]
//
// With a certificate and its key it serves HTTPS instead, on Node's https.createServer, and prints an
// https:// URL.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

function build() {
  const server = new McpServer({ name: 'interop-v2-server', version: '1.0.0' });
  server.registerTool('echo', { description: 'Returns its text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('add', { description: 'Adds a and b', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  server.registerResource('greeting', 'interop://greeting', { mimeType: 'text/plain', description: 'A greeting' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from the v2 SDK' }] }));
  server.registerPrompt('hello', { description: 'Says hello', argsSchema: z.object({ who: z.string() }) },
    ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${who}!` } }] }));
  return server;
}

const handler = createMcpHandler(() => build(), { onerror: (e) => process.stderr.write(`peer: ${e.message}\n`) });
const serve = toNodeHandler(handler);

const flags = {};
for (let i = 2; i < process.argv.length; i += 2) {
  const [name, value] = process.argv.slice(i, i + 2);
  if ((name !== '--tls-cert' && name !== '--tls-key') || value === undefined) {
    process.stderr.write(`peer: unknown argument "${name}" (usage: [--tls-cert FILE --tls-key FILE])\n`);
    process.exit(2);
  }
  flags[name] = value;
}
if (('--tls-cert' in flags) !== ('--tls-key' in flags)) {
  process.stderr.write('peer: --tls-cert and --tls-key go together\n');
  process.exit(2);
}
const tls = '--tls-cert' in flags;
const onRequest = (req, res) => { serve(req, res); };
const listener = tls
  ? createTlsServer({ cert: readFileSync(flags['--tls-cert']), key: readFileSync(flags['--tls-key']) }, onRequest)
  : createServer(onRequest);
listener.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${tls ? 'https' : 'http'}://127.0.0.1:${listener.address().port}/mcp\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
