// An upstream child writes to its stderr without end: the gateway relays it thinned, and neither a
// well-behaved client of the other upstream nor the flooding upstream's own next calls are slowed past the
// bound; nothing leaks.
import { check, goodClient, runScenario, scenarioArgs, sleep } from './harness.mjs';
import {
    adversarialTests, callTool, expectNothingLeaked, nodeUpstream, snapshot, startGateway, textOf, upstreamPid
} from './gateway_support.mjs';

const FLOOD_MS = 4000;
const CALL_BOUND_MS = 3000;

const { binary, extra } = scenarioArgs();

await runScenario('Adversarial.gateway_stderr_flood', async track => {
    const { gateway, bad, calm } = await startGateway(binary, nodeUpstream('flooding_upstream.mjs', adversarialTests), extra);
    track(gateway);
    const flooder = await upstreamPid(bad);
    await callTool(calm, 'echo', { text: 'warm' });
    const baseline = snapshot(gateway);

    const sawCut = gateway.watchLog(/ \[cut\]/);
    const sawDrops = gateway.watchLog(/\[\d+ more lines dropped: over /);
    const good = goodClient(calm);
    check(textOf((await callTool(bad, 'flood')).message) === 'flooding', 'the flood tool did not start');
    await sleep(FLOOD_MS);
    const own = await callTool(bad, 'pid', {}, CALL_BOUND_MS * 3);
    const thinned = `; its log ends: ${gateway.logTail().slice(-300)}`;
    check(sawCut(), `the gateway should cut the flood's 100 kB lines in its log${thinned}`);
    check(sawDrops(), `the gateway should drop and count the flood's lines past its per-second bound${thinned}`);
    check(textOf(own.message) === String(flooder), `the flooding child should still answer its own calls; ` +
        `got ${JSON.stringify(own.message).slice(0, 200)}`);
    check(own.took <= CALL_BOUND_MS, `a call to the flooding upstream should be answered within ` +
        `${CALL_BOUND_MS} ms; it took ${own.took} ms`);
    const served = await good.stop();
    check(served.passed >= 4, `the well-behaved client should keep being served during a ${FLOOD_MS} ms ` +
        `flood; it completed ${served.passed} probes`);
    console.log(`  ${FLOOD_MS} ms of stderr flood: the flooder's own call took ${own.took} ms; good client: ` +
        `${served.passed} probes, slowest ${served.slowest} ms`);
    await expectNothingLeaked(gateway, baseline);
});
