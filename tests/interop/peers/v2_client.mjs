// Interop peer: a small MCP client on the TypeScript SDK v2 (@modelcontextprotocol/client 2.4.0). Connects to
// a Streamable HTTP URL in the given negotiation mode, lists the tools, calls `echo`, reads a resource, gets
// a prompt, and prints one JSON line with what it saw; exits non-zero on any failure. Duet's tests run it
// against Duet's own server in both eras.
//
//   node v2_client.mjs URL legacy|auto|modern
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, mode] = process.argv.slice(2);
const versionNegotiation = mode === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode };
const client = new Client({ name: 'interop-v2-client', version: '1.0.0' }, { versionNegotiation });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const tools = await client.listTools();
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'from the v2 client' } });
  const read = await client.readResource({ uri: 'duet://demo/readme' });
  const prompt = await client.getPrompt({ name: 'review', arguments: { language: 'go' } });
  process.stdout.write(JSON.stringify({
    era: client.getProtocolEra(),
    version: client.getNegotiatedProtocolVersion(),
    tools: tools.tools.map((t) => t.name).sort(),
    echo: echo.content[0].text,
    read: read.contents[0].text,
    prompt: prompt.messages[0].content.text,
  }) + '\n');
  await client.close();
  process.exit(0);
} catch (e) {
  process.stderr.write(`v2 client: ${e?.stack ?? e}\n`);
  process.exit(1);
}
