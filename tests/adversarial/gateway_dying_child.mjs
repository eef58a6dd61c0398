// An upstream child dies mid-call: the call fails clearly (an error naming the upstream, not a hang), the
// next call is served by a replacement child, the dead one is reaped, a well-behaved client of the other
// upstream is served throughout, and nothing leaks.
import { check, goodClient, runScenario, scenarioArgs } from './harness.mjs';
import {
    callTool, expectNothingLeaked, nodeUpstream, snapshot, startGateway, upstreamPid
} from './gateway_support.mjs';

const FAIL_BOUND_MS = 3000;

const { binary, extra } = scenarioArgs();

await runScenario('Adversarial.gateway_dying_child', async track => {
    const { gateway, bad, calm } = await startGateway(binary, nodeUpstream('crashing_upstream.mjs'), extra);
    track(gateway);
    const first = await upstreamPid(bad);
    await callTool(calm, 'echo', { text: 'warm' });
    const baseline = snapshot(gateway);

    const good = goodClient(calm);
    for (let round = 1; round <= 3; ++round) {
        const before = await upstreamPid(bad);
        const crashed = await callTool(bad, 'crash');
        const said = crashed.message.error?.message ?? '';
        check(crashed.message.error && said.includes('crashing_upstream.mjs'), `a call whose child dies should ` +
            `fail naming the upstream; got ${JSON.stringify(crashed.message).slice(0, 300)}`);
        check(crashed.took <= FAIL_BOUND_MS, `a call whose child died should fail within ${FAIL_BOUND_MS} ms, ` +
            `not wait for a timeout; it took ${crashed.took} ms`);
        const after = await upstreamPid(bad);
        check(after !== before, `after child ${before} died the next call should be served by a replacement`);
        if (round === 1) console.log(`  the call failed in ${crashed.took} ms: "${said.slice(0, 160)}"`);
    }
    const served = await good.stop();
    console.log(`  3 children died mid-call (the first was ${first}); good client: ${served.passed} probes, ` +
        `slowest ${served.slowest} ms`);
    await expectNothingLeaked(gateway, baseline);
});
