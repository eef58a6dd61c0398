// What the gateway scenarios share: `duet gateway` in front of a misbehaving upstream and a calm one (the
// demo server on stdio), a modern tools/call to either, and the check after each attack that nothing
// leaked: the gateway's children are back to what it keeps (its pool's and its control connections'), none
// of them an unreaped zombie, and its descriptors back to their baseline.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { check, childrenOf, eventually, exchange, expectFdsBack, fdCount, messageOf, startDuet } from './harness.mjs';
import { modernRequest } from '../../bench/mcp.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const gatewayTests = path.resolve(here, '../gateway');
export const adversarialTests = here;

/** The upstream spec running a Node script (of tests/gateway, or this directory's) with this scenario's Node. */
export function nodeUpstream(script, dir = gatewayTests) {
    return `stdio:${process.execPath} ${path.join(dir, script)}`;
}

/**
 * `duet gateway` serving `bad` (the misbehaving upstream given) at /mcp/bad and the demo server at /mcp/calm,
 * each with one pooled child (--pool-size 1), calls timing out after 2 s. Resolves with the server and
 * both endpoints' URLs.
 */
export async function startGateway(binary, badUpstream, extra = []) {
    const gateway = await startDuet(binary, [
        'gateway', '--upstream', `bad=${badUpstream}`, '--upstream', `calm=stdio:${binary} serve --stdio`,
        '--era', 'legacy', '--pool-size', '1', '--upstream-timeout', '2', ...extra
    ], { label: 'duet gateway' });
    const { origin } = new URL(gateway.url);
    return { gateway, bad: `${origin}/mcp/bad`, calm: `${origin}/mcp/calm` };
}

let callId = 1000;

/** A modern tools/call; resolves with {message, took}. */
export async function callTool(url, name, args = {}, boundMs = 15000) {
    const t0 = Date.now();
    const reply = await exchange(url, modernRequest(++callId, 'tools/call', { name, arguments: args }, name), { boundMs });
    check(reply.status === 200, `tools/call ${name}: expected 200, got ${reply.status}: ${reply.body.slice(0, 300)}`);
    return { message: messageOf(reply), took: Date.now() - t0 };
}

export function textOf(message) {
    return message.result?.content?.[0]?.text;
}

/** The misbehaving upstream's child serving the pool now: its process id, from its `pid` tool. */
export async function upstreamPid(url) {
    const { message } = await callTool(url, 'pid');
    const pid = textOf(message);
    check(/^\d+$/.test(pid ?? ''), `the upstream's pid tool: expected a process id, got ${JSON.stringify(message)}`);
    return Number(pid);
}

/** What the gateway holds once idle: children and descriptors, read after a call to each upstream. */
export function snapshot(gateway) {
    return { children: childrenOf(gateway.pid).length, fds: fdCount(gateway.pid) };
}

/** After an attack: children back to the baseline's count with no zombie among them, descriptors back. */
export async function expectNothingLeaked(gateway, baseline) {
    const settled = await eventually(() => {
        const kids = childrenOf(gateway.pid);
        return kids.length === baseline.children && kids.every(k => k.state !== 'Z');
    });
    const kids = childrenOf(gateway.pid);
    console.log(`  the gateway is back to ${kids.length} children and ${fdCount(gateway.pid)} descriptors ` +
        `(baseline ${baseline.children} and ${baseline.fds})`);
    check(settled, `the gateway should be back to its ${baseline.children} children (its pool and control ` +
        `connections), none a zombie; it has ${kids.length}: ${JSON.stringify(kids)}`);
    await expectFdsBack(gateway, baseline.fds);
}
