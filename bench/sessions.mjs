// Opens many idle legacy sessions on a server and reports what they cost in resident memory.
//
//   node bench/sessions.mjs URL SERVER_PID COUNT [WARMUP]
//
// It first opens WARMUP sessions (default 200) so the allocator and the session table are warm, reads the
// server's RSS, opens the other COUNT - WARMUP sessions 32 at a time (initialize + notifications/initialized,
// then nothing), waits a second, and reads the RSS again. Every handshake must succeed.
// Output: BENCH sessions=N seconds=S rss_before_kb=A rss_after_kb=B bytes_per_session=C
import http from 'node:http';
import { openLegacySession, printBench, rssKb, sleep } from './mcp.mjs';

const [url, pidText, countText, warmupText] = process.argv.slice(2);
if (!url || !pidText || !countText) {
    console.error('usage: node bench/sessions.mjs URL SERVER_PID COUNT [WARMUP]');
    process.exit(2);
}
const pid = Number(pidText);
const count = Number(countText);
const warmup = Math.min(Number(warmupText ?? 200), count);
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

async function open(n) {
    let next = 0;
    const worker = async () => {
        while (next < n) {
            next++;
            await openLegacySession(url, agent);
        }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
}

await open(warmup);
await sleep(500);
const before = rssKb(pid);
const start = performance.now();
await open(count - warmup);
const seconds = (performance.now() - start) / 1000;
agent.destroy();
await sleep(1000);
const after = rssKb(pid);
printBench({
    sessions: count,
    seconds: seconds.toFixed(2),
    rss_before_kb: before,
    rss_after_kb: after,
    bytes_per_session: Math.round(((after - before) * 1024) / (count - warmup))
});
