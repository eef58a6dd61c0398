// A scripted stdio MCP server for the client tests: answers just enough of the legacy lifecycle to show one
// client behaviour per mode. Every line it reads is appended to $FAKE_LOG (when set), so a test can see what
// the client sent. Not a real server; only the C++ client tests use it.
//
//   node stdio_scripted.mjs counter-offer      initialize is answered 2025-03-26 whatever was offered
//   node stdio_scripted.mjs modern-initialize  initialize is answered 2026-07-28 (a broken server)
//   node stdio_scripted.mjs exit-on-discover   a legacy server that exits when it sees server/discover
//   node stdio_scripted.mjs silent-on-discover a legacy server that never answers server/discover
//   node stdio_scripted.mjs slow-exit-on-discover a legacy server that, seeing server/discover, reads nothing
//                                              for a second (a loaded machine) and then exits
//   node stdio_scripted.mjs legacy-error       a legacy server answering server/discover with -32601
//   node stdio_scripted.mjs fragmented         legacy-error, its lines ending in CRLF and a blank line, each
//                                              written 7 bytes at a time, a notification in the same write
//                                              as the answer to initialize, and one line of 20 000 bytes
//   node stdio_scripted.mjs oversized-answer   legacy-error, answering tools/list with one line of 1 MiB + 1
//                                              byte (a test's bound plus one), then a line that is ignored
//   node stdio_scripted.mjs unterminated-answer legacy-error, answering tools/list without the newline, then
//                                              exiting
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2];
const log = process.env.FAKE_LOG;
let pieces = Promise.resolve(); // fragmented writes, in order, one timer turn apart
const send = mode !== 'fragmented' ? (m) => process.stdout.write(JSON.stringify(m) + '\n') : (m, before = '') => {
  const text = before + JSON.stringify(m) + '\r\n\n';
  for (let i = 0; i < text.length; i += 7)
    pieces = pieces.then(() => new Promise((done) => process.stdout.write(text.slice(i, i + 7), () => setTimeout(done, 1))));
};

const lines = createInterface({ input: process.stdin });
// Its last write may never drain (the client stops reading): end with the client instead of waiting for it.

lines.on('line', (line) => {
  if (log) appendFileSync(log, line + '\n');
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // notifications
  if (m.method === 'server/discover') {
    if (mode === 'exit-on-discover') process.exit(0);
    if (mode === 'slow-exit-on-discover') {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000); // blocks: no line is read meanwhile
      process.exit(0);
    }
    if (mode === 'silent-on-discover') return;
    send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    return;
  }
  if (m.method === 'initialize') {
    const version = mode === 'counter-offer' ? '2025-03-26'
      : mode === 'modern-initialize' ? '2026-07-28' : m.params.protocolVersion;
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress',
      params: { progressToken: 'nobody', progress: 1 } }) + '\n';
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: version, capabilities: { tools: {} },
      serverInfo: { name: 'fake-' + mode, version: '1.0.0' } } }, note);
    return;
  }
  if (m.method === 'tools/list' && mode === 'oversized-answer') {
    const head = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] }, pad: '' }).slice(0, -2);
    process.stdout.write(head + 'x'.repeat(1024 * 1024 + 1 - head.length - 2) + '"}\n', () =>
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }) + '\n'));
    return;
  }
  if (m.method === 'tools/list' && mode === 'unterminated-answer') {
    const text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } });
    process.stdout.write(text, () => process.exit(0));
    return;
  }
  if (m.method === 'tools/list') {
    const tools = [{ name: 'fake_tool', inputSchema: { type: 'object' } }];
    if (mode === 'fragmented') // longer than the client's first read buffer
      tools.push({ name: 'long_tool', description: 'x'.repeat(20000), inputSchema: { type: 'object' } });
    send({ jsonrpc: '2.0', id: m.id, result: { tools } });
    return;
  }
  send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
});
