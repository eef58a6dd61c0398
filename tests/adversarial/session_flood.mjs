// 10 000 legacy `initialize` requests from one peer address. The per-peer session rate (a burst of 1024,
// then 1 a second) must bound what it opens, answering the rest 429 with Retry-After; a legacy client from
// another address (127.0.0.2) must still open its session and be served meanwhile; and once the flood's
// connections close and its sessions are deleted, the server's descriptors are back where they were.
import http from 'node:http';

import {
    check, expectFdsBack, fdCount, goodClient, legacyProbe, modernProbe, runScenario, scenarioArgs, startDuet
} from './harness.mjs';
import { initializeRequest } from '../../bench/mcp.mjs';

const REQUESTS = 10000;
const PARALLEL = 8;
const BURST = 1024; // http_options::session_burst_per_peer
const PER_SECOND = 1; // --session-rate's default

const { binary, extra } = scenarioArgs();

function post(agent, url, { body, headers }, method = 'POST') {
    return new Promise((resolve, reject) => {
        const req = http.request(url, {
            method,
            agent,
            localAddress: '127.0.0.1',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }
        });
        req.on('response', res => {
            res.resume();
            res.on('end', () => resolve(res));
        });
        req.on('error', reject);
        req.end(body);
    });
}

await runScenario('Adversarial.session_flood', async track => {
    const server = track(await startDuet(binary, ['serve', ...extra]));
    await modernProbe(server.url);
    const baseline = fdCount(server.pid);
    const good = goodClient(server.url, { localAddress: '127.0.0.2' });

    const agent = new http.Agent({ keepAlive: true, maxSockets: PARALLEL });
    const statuses = new Map();
    const sessions = [];
    let missingRetryAfter = 0;
    const t0 = Date.now();
    let next = 0;
    await Promise.all(Array.from({ length: PARALLEL }, async () => {
        while (next < REQUESTS) {
            const res = await post(agent, server.url, initializeRequest(next++));
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode === 200) sessions.push(res.headers['mcp-session-id']);
            if (res.statusCode === 429 && !res.headers['retry-after']) missingRetryAfter += 1;
        }
    }));
    const seconds = (Date.now() - t0) / 1000;
    const opened = statuses.get(200) ?? 0;
    const refused = statuses.get(429) ?? 0;
    console.log(`  ${REQUESTS} initializes in ${seconds.toFixed(1)} s: ${JSON.stringify(Object.fromEntries(statuses))}`);
    // The other peer's legacy client opens its session right after the flood too.
    await legacyProbe(server.url, { localAddress: '127.0.0.2' });
    const served = await good.stop();
    console.log(`  the client at 127.0.0.2: ${served.passed} probes, slowest ${served.slowest} ms`);

    const allowed = BURST + Math.ceil(seconds * PER_SECOND) + 2;
    check(opened <= allowed, `one peer should open at most ${allowed} sessions (a burst of ${BURST}, then ` +
        `${PER_SECOND}/s for ${seconds.toFixed(1)} s); it opened ${opened}`);
    check(opened >= 1, 'the flooding peer opened no session at all: the burst should let it open some');
    check(opened + refused === REQUESTS, `every initialize beyond the bound should be answered 429; got ` +
        `${JSON.stringify(Object.fromEntries(statuses))}`);
    check(missingRetryAfter === 0, `every 429 should say Retry-After; ${missingRetryAfter} did not`);

    for (const id of sessions) {
        const res = await post(agent, server.url, { headers: { 'Mcp-Session-Id': id } }, 'DELETE');
        check(res.statusCode === 200 || res.statusCode === 204, `DELETE of a flood session: got ${res.statusCode}`);
    }
    agent.destroy();
    await expectFdsBack(server, baseline);
    await legacyProbe(server.url, { localAddress: '127.0.0.2' });
    check(!server.exited(), `${server.label} exited during the attack`);
});
