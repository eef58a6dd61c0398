// An upstream child stops reading its stdin: a call whose request fills the pipe fails within the upstream
// timeout (2 s) instead of blocking the gateway, the deaf child is ended and replaced, a well-behaved client
// of the other upstream is served throughout, and nothing leaks.
import { check, childrenOf, eventually, goodClient, runScenario, scenarioArgs } from './harness.mjs';
import {
    callTool, expectNothingLeaked, nodeUpstream, snapshot, startGateway, textOf, upstreamPid
} from './gateway_support.mjs';

const FAIL_BOUND_MS = 8000; // the 2 s upstream timeout, with room for a loaded machine

const { binary, extra } = scenarioArgs();

await runScenario('Adversarial.gateway_deaf_child', async track => {
    const { gateway, bad, calm } = await startGateway(binary, nodeUpstream('misbehaving_upstream.mjs'), extra);
    track(gateway);
    const deaf = await upstreamPid(bad);
    await callTool(calm, 'echo', { text: 'warm' });
    const baseline = snapshot(gateway);

    const good = goodClient(calm);
    const deafened = await callTool(bad, 'deaf');
    check(textOf(deafened.message) === 'deaf from now on', `the deaf tool: got ${JSON.stringify(deafened.message)}`);
    // More than a pipe holds: the gateway's write to the child cannot finish.
    const unheard = await callTool(bad, 'pid', { padding: 'p'.repeat(1024 * 1024) });
    check(unheard.message.error, `a call to a child that never reads should fail; got ` +
        `${JSON.stringify(unheard.message).slice(0, 200)}`);
    check(unheard.took <= FAIL_BOUND_MS, `a call to a child that never reads should fail within ` +
        `${FAIL_BOUND_MS} ms; it took ${unheard.took} ms`);
    const next = await upstreamPid(bad);
    check(next !== deaf, `the deaf child (pid ${deaf}) should be replaced; it was given the next call`);
    const gone = await eventually(() => !childrenOf(gateway.pid).some(k => k.pid === deaf));
    check(gone, `the deaf child (pid ${deaf}) should be ended and reaped; it is still a child of the gateway`);
    const served = await good.stop();
    console.log(`  the unheard call failed in ${unheard.took} ms: "${unheard.message.error.message.slice(0, 160)}"; ` +
        `good client: ${served.passed} probes, slowest ${served.slowest} ms`);
    await expectNothingLeaked(gateway, baseline);
});
