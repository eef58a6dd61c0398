// An unprotected legacy MCP server over HTTP that records everything it receives, for the gateway's front
// door tests: one stderr line per HTTP request, `request ` then JSON {method, path, headers, body} with every
// header as received and the body as text. A test reads the lines back to check what the gateway forwarded,
// and what it did not (a caller's access token). Its one tool, `echo`, answers with its `text` argument.
// The URL (http://127.0.0.1:PORT/mcp) is the first stdout line; it exits when stdin closes.
//
//   node recording_upstream.mjs
import { createServer } from 'node:http';

function json(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function answer(res, message) {
  if (message.id === undefined) {
    res.writeHead(202);
    return res.end();
  }
  const reply = (result) => json(res, 200, { jsonrpc: '2.0', id: message.id, result }, { 'Mcp-Session-Id': 'recorded' });
  switch (message.method) {
    case 'initialize':
      return reply({
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'recording-upstream', version: '1' },
      });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({
        tools: [{
          name: 'echo',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        }],
      });
    case 'tools/call':
      return reply({ content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] });
    default:
      return json(res, 200, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
  }
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const path = req.url.split('?')[0];
    process.stderr.write(`request ${JSON.stringify({ method: req.method, path, headers: req.headers, body })}\n`);
    if (path !== '/mcp') return json(res, 404, { error: 'not found' });
    if (req.method === 'DELETE') {
      res.writeHead(200);
      return res.end();
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST, DELETE' });
      return res.end();
    }
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    }
    answer(res, message);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
