// Slowloris: many connections trickle a request head a byte at a time, never finishing it. Each must be
// closed by the server within its header timeout (10 s: seconds, not the minutes a trickle would take), and
// a well-behaved client must be served throughout.
import {
    check, closedByServer, eventually, expectFdsBack, fdCount, goodClient, openConnections, requestHead,
    runScenario, scenarioArgs, sleep, startDuet
} from './harness.mjs';

const CONNECTIONS = 200;
const TRICKLE_EVERY_MS = 250; // a ~230-byte head would take about a minute to arrive
const HEADER_TIMEOUT_MS = 10000; // http_options::header_timeout; `duet serve` has no flag for it
const CLOSE_BOUND_MS = HEADER_TIMEOUT_MS + 4000;

const { binary, extra } = scenarioArgs();

await runScenario('Adversarial.slowloris', async track => {
    const server = track(await startDuet(binary, ['serve', ...extra]));
    const baseline = fdCount(server.pid);
    const good = goodClient(server.url);
    const t0 = Date.now();
    const sockets = await openConnections(server.url, CONNECTIONS);
    const head = requestHead(server.url, 2);
    let at = 0;
    const trickle = setInterval(() => {
        at = Math.min(at + 1, head.length - 1); // the head never completes
        for (const s of sockets) if (!s.closed && !s.destroyed) s.write(head[at - 1]);
    }, TRICKLE_EVERY_MS);

    await sleep(HEADER_TIMEOUT_MS / 2);
    const earlyClosed = sockets.filter(s => s.closed || s.readableEnded).length;
    const open = await closedByServer(sockets, CLOSE_BOUND_MS - (Date.now() - t0));
    clearInterval(trickle);
    const took = Date.now() - t0;
    const served = await good.stop();
    for (const s of sockets) s.destroy();

    check(open.length === 0, `every trickling connection should be closed by the server within ` +
        `${CLOSE_BOUND_MS} ms; ${open.length} of ${CONNECTIONS} were still open after ${took} ms`);
    check(earlyClosed < CONNECTIONS, 'the server closed every trickling connection within half its header ' +
        'timeout: not the header timeout at work (is the scenario sending anything?)');
    console.log(`  ${CONNECTIONS} trickling connections closed after ${took} ms; good client: ` +
        `${served.passed} probes, slowest ${served.slowest} ms`);
    await expectFdsBack(server, baseline);
    check(await eventually(() => !server.exited()), `${server.label} exited during the attack`);
});
