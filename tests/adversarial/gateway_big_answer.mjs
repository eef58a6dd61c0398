// An upstream answers 5 MiB, over the gateway's --max-upstream-message (4 MiB here): that call fails with an
// error naming the upstream, the child that sent it is replaced, the next calls are served, a well-behaved
// client of the other upstream is served throughout, and nothing leaks.
import { check, goodClient, runScenario, scenarioArgs } from './harness.mjs';
import {
    callTool, expectNothingLeaked, nodeUpstream, snapshot, startGateway, textOf, upstreamPid
} from './gateway_support.mjs';

const LIMIT = '4MiB';
const ANSWER_BYTES = 5 * 1024 * 1024;

const { binary, extra } = scenarioArgs();

await runScenario('Adversarial.gateway_big_answer', async track => {
    // A limit given after `--` replaces ours: how the scenario is shown to fail without its defence.
    const limit = extra.includes('--max-upstream-message') ? [] : ['--max-upstream-message', LIMIT];
    const { gateway, bad, calm } = await startGateway(binary, nodeUpstream('misbehaving_upstream.mjs'),
        [...limit, ...extra]);
    track(gateway);
    const first = await upstreamPid(bad);
    await callTool(calm, 'echo', { text: 'warm' });
    const baseline = snapshot(gateway);

    const good = goodClient(calm);
    const big = await callTool(bad, 'big', { bytes: ANSWER_BYTES });
    const said = big.message.error?.message ?? '';
    check(big.message.error, `a ${ANSWER_BYTES}-byte answer over ${LIMIT} should fail its call; got ` +
        `${JSON.stringify(big.message).slice(0, 200)}`);
    check(said.includes('misbehaving_upstream.mjs') || said.includes('bad'), `the error should name the ` +
        `upstream; it says: ${said}`);
    const next = await upstreamPid(bad);
    check(next !== first, `the child whose answer was over the limit (pid ${first}) should be replaced; it ` +
        'served the next call');
    const echoed = textOf((await callTool(bad, 'say', { lines: ['after the big answer'] })).message);
    check(echoed === 'said', `the next call to the upstream should be served; got ${echoed}`);
    const served = await good.stop();
    console.log(`  the big answer failed in ${big.took} ms: "${said.slice(0, 160)}"; good client: ` +
        `${served.passed} probes, slowest ${served.slowest} ms`);
    await expectNothingLeaked(gateway, baseline);
});
