// The @modelcontextprotocol/sdk@1.32.2 peer: one `echo` tool, legacy era only (that SDK predates 2026-07-28).
//
//   node sdk1-echo.mjs --stdio          stdio
//   node sdk1-echo.mjs --port P         Streamable HTTP on 127.0.0.1:P/mcp with stateful sessions: initialize
//                                       opens a session (Mcp-Session-Id), as the SDK's own examples wire it
//
// It answers in SSE, the SDK's default. Its JSON-response mode (enableJsonResponse) keeps one stream mapping per
// POST for as long as the session lives (typescript-sdk issue #2559, open for v1.x): about 10 KB a request, so
// the peer's heap and its garbage collection grew with every request it had served, and a peer that had served
// more (a gateway's upstream, which serves the gateway's rows) ran slower than a younger one. The first
// stdout line of the HTTP server is its URL. Written for the benchmark only: no auth, no Origin checks.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function makeServer() {
    const server = new McpServer({ name: 'bench-sdk1-echo', version: '1.32.2' });
    server.registerTool(
        'echo',
        { description: 'Returns its text argument unchanged', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

function readBody(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        req.on('data', c => chunks.push(c));
        req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        req.on('error', reject);
    });
}

function jsonError(res, status, message) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

async function serveHttp(port) {
    const sessions = new Map(); // Mcp-Session-Id -> transport
    const http = createServer(async (req, res) => {
        try {
            if (req.url !== '/mcp') return jsonError(res, 404, 'Not found');
            const sessionId = req.headers['mcp-session-id'];
            let body;
            if (req.method === 'POST') {
                const text = await readBody(req);
                try {
                    body = JSON.parse(text);
                } catch {
                    return jsonError(res, 400, 'Parse error');
                }
            }
            let transport = sessionId ? sessions.get(sessionId) : undefined;
            if (sessionId && !transport) return jsonError(res, 404, 'Unknown session');
            if (!transport) {
                if (req.method !== 'POST' || body?.method !== 'initialize')
                    return jsonError(res, 400, 'No session: send initialize first');
                transport = new StreamableHTTPServerTransport({
                    sessionIdGenerator: () => randomUUID(),
                    onsessioninitialized: id => sessions.set(id, transport)
                });
                transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
                await makeServer().connect(transport);
            }
            await transport.handleRequest(req, res, body);
        } catch (e) {
            if (!res.headersSent) jsonError(res, 500, String(e));
        }
    });
    http.keepAliveTimeout = 120000;
    http.listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${http.address().port}/mcp`));
}

const args = process.argv.slice(2);
if (args[0] === '--stdio') {
    await makeServer().connect(new StdioServerTransport());
} else if (args[0] === '--port' && args[1] !== undefined) {
    await serveHttp(Number(args[1]));
} else {
    console.error('usage: node sdk1-echo.mjs --stdio | --port P');
    process.exit(2);
}
