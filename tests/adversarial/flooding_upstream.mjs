// A legacy MCP server on stdio whose `flood` tool starts writing to its stderr without end, as fast as the
// reader takes it (it waits for the pipe to drain, so it floods for as long as it lives rather than dying of
// its own write queue, as an unbounded writer would), long lines among short ones. `pid` answers its
// process id, so a scenario can tell it is the same child still answering.
import { createInterface } from 'node:readline';

const send = message => process.stdout.write(JSON.stringify(message) + '\n');
const tools = ['pid', 'flood'].map(name => ({ name, inputSchema: { type: 'object' } }));

function flood() {
    let n = 0;
    const more = () => {
        for (;;) {
            n += 1;
            const line = n % 50 === 0 ? 'L'.repeat(100000) : `flood line ${n}`;
            if (!process.stderr.write(line + '\n')) return process.stderr.once('drain', more);
            if (n % 200 === 0) return setImmediate(more); // its stdin gets a turn too
        }
    };
    more();
}

createInterface({ input: process.stdin }).on('line', line => {
    let m;
    try {
        m = JSON.parse(line);
    } catch {
        return;
    }
    if (m.id === undefined || m.method === undefined) return; // notifications and answers
    const reply = result => send({ jsonrpc: '2.0', id: m.id, result });
    const text = t => reply({ content: [{ type: 'text', text: t }] });
    switch (m.method) {
        case 'initialize':
            return reply({
                protocolVersion: '2025-11-25',
                capabilities: { tools: {} },
                serverInfo: { name: 'flooding-upstream', version: '1.0.0' }
            });
        case 'ping':
            return reply({});
        case 'tools/list':
            return reply({ tools });
        case 'tools/call':
            if (m.params?.name === 'flood') {
                text('flooding');
                return flood();
            }
            return text(String(process.pid));
        default:
            return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    }
}).on('close', () => process.exit(0));
