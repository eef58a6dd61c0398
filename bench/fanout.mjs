// Opens many modern listen streams on a server, then changes its tools once and times the fan-out.
//
//   node bench/fanout.mjs URL SERVER_PID STREAMS
//
// The server must offer a tool `touch_tools` that changes its tool list (bench_server does). Each
// stream is a subscriptions/listen POST on its own connection asking for toolsListChanged; once every stream
// has its notifications/subscriptions/acknowledged, the server's RSS is read, `touch_tools` is called, and
// the time from that call until each stream has its notifications/tools/list_changed (tagged with its own
// subscription id) is recorded. The time includes this client's own parsing of the 1 000 SSE events.
// Output: BENCH streams=N open_seconds=S rss_before_kb=A rss_streams_kb=B fanout_p50_ms=C fanout_last_ms=D
import http from 'node:http';
import { modernRequest, post, printBench, rssKb, sleep } from './mcp.mjs';

const [url, pidText, streamsText] = process.argv.slice(2);
if (!url || !pidText || !streamsText) {
    console.error('usage: node bench/fanout.mjs URL SERVER_PID STREAMS');
    process.exit(2);
}
const pid = Number(pidText);
const count = Number(streamsText);
let unchanged = count;
let allChanged;
const everyStreamChanged = new Promise(resolve => (allChanged = resolve));

// One listen stream: resolves `acked` on its acknowledgement, records when list_changed arrives.
function listen(i) {
    const subscriptionId = `L${i}`;
    const { body, headers } = modernRequest(subscriptionId, 'subscriptions/listen', {
        notifications: { toolsListChanged: true }
    });
    const stream = { changedAt: undefined, request: undefined };
    stream.acked = new Promise((resolve, reject) => {
        stream.request = http.request(
            url,
            {
                method: 'POST',
                agent: false,
                headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }
            },
            res => {
                if (res.statusCode !== 200) return reject(new Error(`listen ${i}: HTTP ${res.statusCode}`));
                let pending = '';
                res.setEncoding('utf8');
                res.on('data', chunk => {
                    pending += chunk;
                    let nl;
                    while ((nl = pending.indexOf('\n')) >= 0) {
                        const line = pending.slice(0, nl).trimEnd();
                        pending = pending.slice(nl + 1);
                        if (!line.startsWith('data:')) continue;
                        const msg = JSON.parse(line.slice(5));
                        const tag = msg.params?._meta?.['io.modelcontextprotocol/subscriptionId'];
                        if (tag !== subscriptionId) return reject(new Error(`listen ${i}: foreign message ${line}`));
                        if (msg.method === 'notifications/subscriptions/acknowledged') resolve();
                        else if (msg.method === 'notifications/tools/list_changed' && stream.changedAt === undefined) {
                            stream.changedAt = performance.now();
                            if (--unchanged === 0) allChanged();
                        }
                        else if (msg.error) reject(new Error(`listen ${i}: ${line}`));
                    }
                });
                res.on('error', () => {});
            }
        );
        stream.request.on('error', e => (stream.closing ? undefined : reject(e)));
        stream.request.end(body);
    });
    return stream;
}

// Warm the server up with one ordinary request before the baseline.
const warm = await post(url, modernRequest(1, 'tools/call', { name: 'echo', arguments: { text: 'hello' } }, 'echo'));
if (warm.status !== 200) throw new Error(`warm-up call failed: ${warm.status} ${warm.body}`);
await sleep(300);
const before = rssKb(pid);

const openStart = performance.now();
const streams = [];
for (let i = 0; i < count; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 100); j++) batch.push(listen(j));
    streams.push(...batch);
    await Promise.all(batch.map(s => s.acked));
}
const openSeconds = (performance.now() - openStart) / 1000;
await sleep(500);
const withStreams = rssKb(pid);

const t0 = performance.now();
const touched = await post(url, modernRequest(2, 'tools/call', { name: 'touch_tools', arguments: {} }, 'touch_tools'));
if (touched.status !== 200 || !touched.body.includes('"changed"'))
    throw new Error(`touch_tools failed: ${touched.status} ${touched.body}`);
await Promise.race([everyStreamChanged, sleep(30000)]);
const missing = streams.filter(s => s.changedAt === undefined).length;
const delays = streams.filter(s => s.changedAt !== undefined).map(s => s.changedAt - t0).sort((a, b) => a - b);

for (const s of streams) {
    s.closing = true;
    s.request.destroy();
}
printBench({
    streams: count,
    open_seconds: openSeconds.toFixed(2),
    rss_before_kb: before,
    rss_streams_kb: withStreams,
    fanout_p50_ms: delays.length ? delays[Math.floor(delays.length / 2)].toFixed(2) : 'NaN',
    fanout_last_ms: delays.length ? delays[delays.length - 1].toFixed(2) : 'NaN',
    missing
});
process.exit(missing === 0 ? 0 : 1);
