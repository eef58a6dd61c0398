// The soak's mixed traffic against one MCP endpoint: loops that each play one kind of client until paused.
// Well-behaved loops (modern calls, legacy sessions, listen streams) count every failure; the abrupt loop's
// clients drop their connections mid-request on purpose, so nothing they see is a failure.
import http from 'node:http';
import net from 'node:net';

import { initializeRequest, legacyRequest, modernRequest, sleep } from './mcp.mjs';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
// Legacy sessions come from many loopback addresses: the per-peer session rate (a burst of 1024, then 1/s)
// bounds one address, and a soak opens tens of thousands.
const PEERS = Array.from({ length: 200 }, (_, i) => `127.0.1.${i + 1}`);

function request(url, { body, headers }, { method = 'POST', agent, localAddress } = {}) {
    return new Promise((resolve, reject) => {
        const req = http.request(url, { method, agent, localAddress, headers: { ...JSON_HEADERS, ...headers } });
        req.setTimeout(10000, () => req.destroy(new Error(`no answer to ${method} within 10 s`)));
        req.on('response', res => {
            const chunks = [];
            res.on('data', c => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}

function expectEcho(reply, text, what) {
    if (reply.status !== 200 || !reply.body.includes(JSON.stringify(text)))
        throw new Error(`${what}: expected 200 echoing "${text}", got ${reply.status}: ${reply.body.slice(0, 200)}`);
}

/**
 * The traffic for one endpoint. `counts` gathers what was done per kind and the well-behaved failures;
 * pause() resolves once every loop is idle, resume() lets them go on, stop() ends them.
 */
export function traffic(label, url) {
    const counts = { modern: 0, legacySessions: 0, listens: 0, abrupt: 0, failures: 0, firstFailures: [] };
    let state = 'running';
    let wake = () => {};
    let resumed = Promise.resolve();
    const idle = new Set();
    let loops = 0;

    const fail = e => {
        counts.failures += 1;
        if (counts.firstFailures.length < 5) counts.firstFailures.push(`${label}: ${e.message}`);
    };
    // Runs `step` until stopped, idling while paused; a well-behaved step's error is a failure.
    const loop = (step, wellBehaved = true) => {
        const me = loops++;
        return (async () => {
            for (let i = 0; state !== 'stopped'; ++i) {
                if (state === 'paused') {
                    idle.add(me);
                    await resumed;
                    idle.delete(me);
                    continue;
                }
                try {
                    await step(i);
                } catch (e) {
                    if (wellBehaved) fail(e);
                    await sleep(100);
                }
            }
        })();
    };

    let modernAgent = new http.Agent({ keepAlive: true });
    const modernCalls = async i => {
        const text = `${label} modern ${i}`;
        const reply = await request(url, modernRequest(i, 'tools/call', { name: 'echo', arguments: { text } }, 'echo'), { agent: modernAgent });
        expectEcho(reply, text, 'modern tools/call');
        counts.modern += 1;
    };

    const legacySession = async i => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        const localAddress = PEERS[i % PEERS.length];
        try {
            const init = await request(url, initializeRequest(0), { agent, localAddress });
            const session = init.headers['mcp-session-id'];
            if (init.status !== 200 || !session) throw new Error(`initialize: got ${init.status}: ${init.body.slice(0, 200)}`);
            const done = await request(url, legacyRequest(undefined, 'notifications/initialized', undefined, session), { agent, localAddress });
            if (done.status !== 202) throw new Error(`notifications/initialized: got ${done.status}`);
            for (let call = 1; call <= 5; ++call) {
                const text = `${label} legacy ${i}.${call}`;
                const reply = await request(url, legacyRequest(call, 'tools/call', { name: 'echo', arguments: { text } }, session), { agent, localAddress });
                expectEcho(reply, text, 'legacy tools/call');
            }
            const end = await request(url, { headers: { 'Mcp-Session-Id': session } }, { method: 'DELETE', agent, localAddress });
            if (end.status !== 200 && end.status !== 204) throw new Error(`DELETE: got ${end.status}`);
            counts.legacySessions += 1;
        } finally {
            agent.destroy();
        }
    };

    // A listen stream held open for a while, then dropped by the client, as a closed tab drops it.
    const listenStream = i =>
        new Promise((resolve, reject) => {
            const { body, headers } = modernRequest(`S${i}`, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
            const req = http.request(url, { method: 'POST', agent: false, headers: { ...JSON_HEADERS, ...headers } });
            const timer = setTimeout(() => (req.destroy(), reject(new Error('listen: no acknowledgement within 10 s'))), 10000);
            req.on('response', res => {
                if (res.statusCode !== 200) return clearTimeout(timer), res.resume(), reject(new Error(`listen: got ${res.statusCode}`));
                res.setEncoding('utf8');
                let seen = '';
                res.on('data', chunk => {
                    seen += chunk;
                    if (!seen.includes('notifications/subscriptions/acknowledged')) return;
                    clearTimeout(timer);
                    seen = '';
                    setTimeout(() => {
                        req.destroy();
                        counts.listens += 1;
                        resolve();
                    }, 100 + (i % 10) * 100);
                });
                res.on('error', () => {});
            });
            req.on('error', e => (req.destroyed ? undefined : reject(e)));
            req.end(body);
        });

    // Clients that go away mid-request: before the body is whole, before reading the answer, and in the
    // middle of a call that takes a second (countdown), which the server then cancels.
    const { hostname, port, pathname, host } = new URL(url);
    const abrupt = async i => {
        const kind = i % 3;
        const { body, headers } = kind === 2
            ? modernRequest(i, 'tools/call', { name: 'countdown', arguments: { n: 20 } }, 'countdown')
            : modernRequest(i, 'tools/call', { name: 'echo', arguments: { text: 'dropped' } }, 'echo');
        const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\n` +
            Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
        await new Promise(resolve => {
            const s = net.connect({ host: hostname, port: Number(port) }, () => {
                s.write(kind === 0 ? head + body.slice(0, body.length >> 1) : head + body);
                setTimeout(() => s.destroy(), kind === 2 ? 300 : 5);
            });
            s.on('error', () => {});
            s.on('close', resolve);
            s.resume();
        });
        counts.abrupt += 1;
        await sleep(20);
    };

    const running = [loop(modernCalls), loop(modernCalls), loop(legacySession), loop(legacySession), loop(listenStream),
        loop(listenStream), loop(abrupt, false), loop(abrupt, false)];

    return {
        counts,
        async pause() {
            if (state !== 'paused') {
                state = 'paused';
                resumed = new Promise(r => (wake = r));
            }
            while (idle.size < loops) await sleep(50);
            modernAgent.destroy(); // its kept-alive connections too: the quiet state holds none of ours
        },
        resume() {
            modernAgent = new http.Agent({ keepAlive: true });
            state = 'running';
            wake();
        },
        async stop() {
            state = 'stopped';
            wake();
            await Promise.all(running);
            modernAgent.destroy();
        }
    };
}
