// Interop peer: a small MCP server on the TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.2) over stdio.
// It speaks the legacy era only (2025-11-25 and older), so a client in `auto` mode must fall back to
// initialize. Duet's client tests spawn it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const server = new McpServer({ name: 'interop-v1-server', version: '1.0.0' });
server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }));
server.registerResource('greeting', 'interop://greeting', { mimeType: 'text/plain', description: 'A greeting' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from the v1 SDK' }] }));
server.registerPrompt('hello', { description: 'Says hello', argsSchema: { who: z.string() } },
  ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${who}!` } }] }));
await server.connect(new StdioServerTransport());
