// 1000 connections each announce a 4 MiB body (Content-Length: 4194304) and send none of it. Had the server
// reserved what was announced, that is 4 GiB; its resident memory must grow by far less, a well-behaved
// client must be served meanwhile, and its descriptors must come back once the attacker closes.
// Under the sanitizers the RSS bound is not checked: their shadow memory and quarantine say nothing about
// what Duet reserves.
import {
    check, expectFdsBack, fdCount, goodClient, modernProbe, openConnections, requestHead, rssKb, runScenario,
    scenarioArgs, sleep, startDuet
} from './harness.mjs';

const CONNECTIONS = 1000;
const ANNOUNCED = 4 * 1024 * 1024;
const MAX_GROWTH_MIB = 200;

const { binary, sanitized, extra } = scenarioArgs();

await runScenario('Adversarial.announced_bodies', async track => {
    const server = track(await startDuet(binary, ['serve', ...extra]));
    await modernProbe(server.url);
    const baselineFds = fdCount(server.pid);
    const baselineRss = rssKb(server.pid);

    const good = goodClient(server.url);
    const sockets = await openConnections(server.url, CONNECTIONS);
    const head = requestHead(server.url, ANNOUNCED);
    for (const s of sockets) s.write(head);
    await sleep(2000);
    await modernProbe(server.url); // served after every head was sent
    const grownMib = (rssKb(server.pid) - baselineRss) / 1024;
    const stillOpen = sockets.filter(s => !s.closed && !s.readableEnded).length;
    const served = await good.stop();
    console.log(`  ${CONNECTIONS} × ${ANNOUNCED} bytes announced: RSS grew ${grownMib.toFixed(1)} MiB, ` +
        `${stillOpen} still open; good client: ${served.passed} probes, slowest ${served.slowest} ms`);
    check(stillOpen > CONNECTIONS / 2, `the announcing connections should be held waiting for their bodies; ` +
        `only ${stillOpen} of ${CONNECTIONS} are open`);
    if (sanitized) console.log('  sanitizer build: the RSS bound is not checked');
    else
        check(grownMib < MAX_GROWTH_MIB, `the server should reserve nothing like the ${CONNECTIONS * 4} MiB ` +
            `announced: expected under ${MAX_GROWTH_MIB} MiB of growth, its RSS grew ${grownMib.toFixed(1)} MiB`);

    for (const s of sockets) s.destroy();
    await expectFdsBack(server, baselineFds);
    await modernProbe(server.url);
    check(!server.exited(), `${server.label} exited during the attack`);
});
