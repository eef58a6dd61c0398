// A scripted Streamable HTTP MCP server for the client tests (loopback only). Prints its URL on the first
// stdout line. Not a real server; only the C++ client tests use it.
//
//   node http_scripted.mjs counter-offer   legacy: initialize answered 2025-06-18 with a session; tools/list
//                                          names one tool after the MCP-Protocol-Version header it received
//   node http_scripted.mjs auth            every request gets 401 with WWW-Authenticate
//   node http_scripted.mjs legacy-400      legacy-only: anything before initialize gets 400 with an id-less
//                                          error, as the SDK servers answer a probe
//   node http_scripted.mjs sse-late-end    legacy: tools/list answered on an SSE stream whose last chunk goes
//                                          out 30 ms after the answer's event, in a write of its own
//   node http_scripted.mjs sse-open        legacy: tools/list answered on an SSE stream never ended
//   node http_scripted.mjs big-json        legacy: tools/list answered with a JSON body of 2 MiB
//   node http_scripted.mjs big-sse         legacy: tools/list answered on an SSE stream, one event of 2 MiB
// In the two SSE modes the one tool listed is named "posted-P-previous-S": P, the TCP connections that had
// carried a POST when it answered (a client's GET stream is not counted: it opens when it likes); S, whether the
// connection of the previous tools/list answer is "open" or "closed" ("none" for the first). A GET of /state
// answers S for the last tools/list answer, so that a test can ask without the client running meanwhile.
// An idle kept-alive connection is never closed by this server: a test may wait as long as it likes.
import { createServer } from 'node:http';

const mode = process.argv[2];
const sessions = new Set();
let posted = 0;
let previous; // the socket of the last tools/list answer
const stateOf = (socket) => (socket === undefined ? 'none' : socket.destroyed ? 'closed' : 'open');

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const json = (status, m, headers = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(m));
    };
    if (mode === 'auth') {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer' });
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url === '/state') { res.writeHead(200); res.end(stateOf(previous)); return; }
    if (req.method === 'GET') { res.writeHead(405); res.end(); return; }
    if (req.method === 'DELETE') { sessions.delete(req.headers['mcp-session-id']); res.writeHead(200); res.end(); return; }
    let m;
    try { m = JSON.parse(body); } catch { json(400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }); return; }
    if (m.method === 'initialize') {
      const sid = 'session-' + Math.random().toString(16).slice(2);
      sessions.add(sid);
      json(200, { jsonrpc: '2.0', id: m.id, result: {
        protocolVersion: mode === 'counter-offer' ? '2025-06-18' : m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: 'fake-http', version: '1.0.0' } } }, { 'Mcp-Session-Id': sid });
      return;
    }
    const sid = req.headers['mcp-session-id'];
    if (!sid || !sessions.has(sid)) {
      json(400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Server not initialized' } });
      return;
    }
    if (m.id === undefined) { res.writeHead(202); res.end(); return; }
    if (m.method === 'tools/list' && mode.startsWith('big-')) {
      const answer = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [], pad: 'x'.repeat(2 * 1024 * 1024) } });
      if (mode === 'big-json') { json(200, JSON.parse(answer)); return; }
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`event: message\ndata: ${answer}\n\n`);
      return;
    }
    if (m.method === 'tools/list' && mode.startsWith('sse-')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const state = stateOf(previous);
      previous = req.socket;
      const tools = [{ name: `posted-${posted}-previous-${state}`, inputSchema: { type: 'object' } }];
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools } })}\n\n`);
      if (mode === 'sse-late-end') setTimeout(() => res.end(), 30);
      return;
    }
    if (m.method === 'tools/list') {
      const v = req.headers['mcp-protocol-version'] ?? 'none';
      json(200, { jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'header-' + v, inputSchema: { type: 'object' } }] } });
      return;
    }
    json(200, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
});
server.on('request', (req) => {
  if (req.method === 'POST' && !req.socket.carriedPost) {
    req.socket.carriedPost = true;
    ++posted;
  }
});
server.keepAliveTimeout = 0;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
