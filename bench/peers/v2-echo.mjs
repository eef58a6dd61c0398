// The @modelcontextprotocol/server@2.4.0 peer: one `echo` tool, both eras, as that SDK's docs wire it.
//
//   node v2-echo.mjs --stdio            stdio through serveStdio (the opening message picks the era)
//   node v2-echo.mjs --port P           Streamable HTTP on 127.0.0.1:P/mcp: createMcpHandler (modern requests,
//                                       plus its stateless legacy fallback) behind @modelcontextprotocol/node
//
// responseMode 'json' so it answers in the same shape Duet does. The first stdout line of the HTTP server is
// its URL. Written for the benchmark only: no auth, no Origin checks.
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

function makeServer() {
    const server = new McpServer({ name: 'bench-v2-echo', version: '2.4.0' }, { capabilities: { tools: {} } });
    server.registerTool(
        'echo',
        { description: 'Returns its text argument unchanged', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

const args = process.argv.slice(2);
if (args[0] === '--stdio') {
    serveStdio(makeServer);
} else if (args[0] === '--port' && args[1] !== undefined) {
    const handle = toNodeHandler(createMcpHandler(makeServer, { responseMode: 'json' }));
    const http = createServer((req, res) => {
        if (req.url !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        handle(req, res);
    });
    http.keepAliveTimeout = 120000;
    http.listen(Number(args[1]), '127.0.0.1', () => console.log(`http://127.0.0.1:${http.address().port}/mcp`));
} else {
    console.error('usage: node v2-echo.mjs --stdio | --port P');
    process.exit(2);
}
