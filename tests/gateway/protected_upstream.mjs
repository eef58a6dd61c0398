// A legacy MCP server over HTTP that wants a bearer token, and its own small authorization server, for the
// gateway's upstream credentials: it answers 401 with protected resource metadata, grants tokens by the
// client credentials grant (HTTP Basic) and by refresh, and its one tool, `whoami`, answers with the
// Authorization header its request carried. The URL (http://127.0.0.1:PORT/mcp) is the first stdout line;
// every grant is logged on stderr ("grant client_credentials", "grant refresh_token").
//
//   STATIC_TOKEN=t CLIENT_ID=id CLIENT_SECRET=s REFRESH_TOKEN=r node protected_upstream.mjs
import { createServer } from 'node:http';

const accepted = new Set(process.env.STATIC_TOKEN ? [process.env.STATIC_TOKEN] : []);
let issued = 0;
let base = '';

function json(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function basicIdentity(req) {
  const h = req.headers.authorization || '';
  if (!h.startsWith('Basic ')) return null;
  const [id, secret] = Buffer.from(h.slice(6), 'base64').toString().split(':');
  return { id: decodeURIComponent(id), secret: decodeURIComponent(secret || '') };
}

function token(req, res, form) {
  const who = basicIdentity(req);
  if (!who || who.id !== process.env.CLIENT_ID || who.secret !== process.env.CLIENT_SECRET)
    return json(res, 401, { error: 'invalid_client' });
  const grant = form.get('grant_type');
  if (grant === 'refresh_token' && form.get('refresh_token') !== process.env.REFRESH_TOKEN)
    return json(res, 400, { error: 'invalid_grant' });
  if (grant !== 'client_credentials' && grant !== 'refresh_token')
    return json(res, 400, { error: 'unsupported_grant_type' });
  issued += 1;
  const access = `${grant === 'refresh_token' ? 'refreshed' : 'cc'}-${issued}`;
  accepted.add(access);
  process.stderr.write(`grant ${grant} resource=${form.get('resource')}\n`);
  json(res, 200, { access_token: access, token_type: 'Bearer', expires_in: 3600 }, { 'Cache-Control': 'no-store' });
}

function mcp(req, res, message) {
  const auth = req.headers.authorization || '';
  if (!auth.startsWith('Bearer ') || !accepted.has(auth.slice(7)))
    return json(res, 401, { error: 'invalid_token' }, {
      'WWW-Authenticate': `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    });
  if (message.id === undefined) {
    res.writeHead(202);
    return res.end();
  }
  const reply = (result) => json(res, 200, { jsonrpc: '2.0', id: message.id, result }, { 'Mcp-Session-Id': 's1' });
  switch (message.method) {
    case 'initialize':
      return reply({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'protected', version: '1' } });
    case 'tools/list':
      return reply({ tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] });
    case 'tools/call':
      return reply({ content: [{ type: 'text', text: auth }] });
    default:
      return json(res, 200, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
  }
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp')
      return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: base,
        token_endpoint: `${base}/token`,
        grant_types_supported: ['client_credentials', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
      });
    if (req.method === 'POST' && path === '/token') return token(req, res, new URLSearchParams(body));
    if (path !== '/mcp') return json(res, 404, { error: 'not found' });
    if (req.method === 'GET') {
      res.writeHead(405);
      return res.end();
    }
    if (req.method === 'DELETE') {
      res.writeHead(200);
      return res.end();
    }
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      return json(res, 400, { error: 'not JSON' });
    }
    mcp(req, res, message);
  });
});

server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`${base}/mcp\n`);
});
