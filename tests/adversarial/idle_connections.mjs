// 1100 idle connections against `duet serve` under `ulimit -n 1024`: more than it may hold. At its cap the
// server must not spin on a listener it cannot accept from (its CPU time stays small), must serve a
// well-behaved client as soon as the attacker lets go of some connections, and must give every descriptor
// back once the attacker closes them all.
import fs from 'node:fs';

import {
    check, cpuSeconds, exchange, expectFdsBack, fdCount, legacyProbe, modernProbe, openConnections, PROBE_BOUND_MS,
    runScenario, scenarioArgs, sleep, startDuet
} from './harness.mjs';
import { modernRequest } from '../../bench/mcp.mjs';

const CONNECTIONS = 1100;
const SERVER_NOFILE = 1024;
const RELEASED = 300; // closed by the attacker to make room: more than wait in the listener's backlog
const MEASURE_MS = 3000;
const MAX_CPU_SECONDS = 0.6; // a spinning accept loop burns ~3 s of one core in 3 s

const { binary, extra } = scenarioArgs();

function ownDescriptorLimit() {
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find(l => l.startsWith('Max open files'));
    return Number(line.split(/\s+/)[3]);
}

await runScenario('Adversarial.idle_connections', async track => {
    check(ownDescriptorLimit() >= CONNECTIONS + 200, `the attacker needs ${CONNECTIONS + 200} descriptors, its ` +
        `limit is ${ownDescriptorLimit()}: run it under 'ulimit -n 4096'`);
    const server = track(await startDuet(binary, ['serve', ...extra], { nofile: SERVER_NOFILE }));
    await modernProbe(server.url);
    const baseline = fdCount(server.pid);

    const sockets = await openConnections(server.url, CONNECTIONS);
    await sleep(1000);
    const held = fdCount(server.pid);
    const cpu0 = cpuSeconds(server.pid);
    await sleep(MEASURE_MS);
    const spent = cpuSeconds(server.pid) - cpu0;
    console.log(`  server holds ${held} descriptors (baseline ${baseline}); CPU over ${MEASURE_MS} ms at its ` +
        `cap: ${spent.toFixed(2)} s`);
    check(spent <= MAX_CPU_SECONDS, `the server should idle at its connection cap: expected at most ` +
        `${MAX_CPU_SECONDS} s of CPU in ${MEASURE_MS} ms, it used ${spent.toFixed(2)} s`);

    // A client arriving at the cap waits in the backlog; once the attacker lets go of some, it is served.
    const { body, headers } = modernRequest(1, 'tools/call', { name: 'echo', arguments: { text: 'at the cap' } }, 'echo');
    const waiting = exchange(server.url, { body, headers }, { boundMs: 30000 }).then(r => ({ r, at: Date.now() }));
    await sleep(500);
    const releasedAt = Date.now();
    for (const s of sockets.slice(0, RELEASED)) s.destroy();
    const { r, at } = await waiting;
    check(r.status === 200 && r.body.includes('at the cap'), `the client waiting at the cap: expected its echo, ` +
        `got ${r.status}: ${r.body.slice(0, 200)}`);
    const after = Math.max(0, at - releasedAt);
    check(after <= PROBE_BOUND_MS, `a client waiting at the cap should be served within ${PROBE_BOUND_MS} ms ` +
        `of connections closing; it took ${after} ms`);
    await modernProbe(server.url);
    await legacyProbe(server.url);
    console.log(`  the client waiting at the cap was served ${after} ms after ${RELEASED} connections closed`);

    for (const s of sockets) s.destroy();
    await expectFdsBack(server, baseline);
    await modernProbe(server.url);
    check(!server.exited(), `${server.label} exited during the attack`);
});
