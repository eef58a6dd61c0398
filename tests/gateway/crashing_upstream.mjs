// A legacy MCP server on stdio for the gateway tests that exits the moment `crash` is called: what a real
// server does when it dies mid-call. `pid` answers the process id, so a test can see a new child serve.
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const tools = [
  { name: 'crash', description: 'Exits the server', inputSchema: { type: 'object' } },
  { name: 'pid', description: 'The server process id', inputSchema: { type: 'object' } },
];

createInterface({ input: process.stdin }).on('line', (line) => {
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
        serverInfo: { name: 'crashing-upstream', version: '1.0.0' },
      });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call':
      if (m.params?.name === 'crash') process.exit(1);
      return reply({ content: [{ type: 'text', text: String(process.pid) }] });
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
