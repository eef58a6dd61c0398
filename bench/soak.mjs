// `make soak`: SOAK_SECONDS (default 600) of mixed traffic against one `duet serve` and one `duet gateway` in
// front of `duet serve --stdio` (release build), looking for slow leaks that no single test sees. Every few
// seconds it samples each server's RSS, descriptors and children. After a warm-up it pauses the traffic,
// lets the servers settle and takes a baseline; at the end it pauses again and compares: RSS may grow by at
// most RSS_BOUND_MIB, descriptors and children must be back to the baseline, no child a zombie, and no
// well-behaved request may have failed. Prints the samples and the verdict; exits non-zero on a failure.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { modernRequest, post, rssKb, sleep } from './mcp.mjs';
import { traffic } from './soak_traffic.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const duet = path.resolve(root, process.env.BUILD ?? 'build', 'release', 'apps/duet/duet');
const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const WARMUP_SECONDS = Math.min(60, Math.max(10, SECONDS / 10));
const SAMPLE_SECONDS = 5;
const SETTLE_MS = 3000;
const RSS_BOUND_MIB = 32;

function start(label, args) {
    const child = spawn(duet, [...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr.resume(); // its request log: read, so a full pipe never stalls it
    return new Promise((resolve, reject) => {
        let out = '';
        child.stdout.on('data', d => {
            out += d;
            if (out.includes('\n')) resolve({ label, child, pid: child.pid, url: out.split('\n')[0].trim() });
        });
        child.on('exit', code => reject(new Error(`${label} exited (${code}) before printing its URL`)));
    });
}

function children(pid) {
    const kids = [];
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        let text = '';
        try {
            text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        } catch {
            continue;
        }
        for (const kid of text ? text.split(/\s+/) : []) {
            try {
                const stat = fs.readFileSync(`/proc/${kid}/stat`, 'utf8');
                kids.push({ pid: Number(kid), state: stat[stat.lastIndexOf(')') + 2] });
            } catch {
                // reaped meanwhile
            }
        }
    }
    return kids;
}

function sample(server) {
    const kids = children(server.pid);
    return {
        rssMib: rssKb(server.pid) / 1024,
        fds: fs.readdirSync(`/proc/${server.pid}/fd`).length,
        children: kids.length,
        zombies: kids.filter(k => k.state === 'Z').length
    };
}

if (!fs.existsSync(duet)) {
    console.error(`soak: ${duet} is missing: build it with scripts/build release (make soak does)`);
    process.exit(2);
}
const serve = await start('serve', ['serve']);
// In the legacy era each legacy session gets a child of its own: the soak spawns and reaps thousands.
const gateway = await start('gateway', ['gateway', '--upstream', `stdio:${duet} serve --stdio`, '--era', 'legacy']);
const servers = [serve, gateway];
const loads = [traffic('serve', serve.url), traffic('gateway', gateway.url)];
console.log(`soak: ${SECONDS} s against ${serve.url} (duet serve) and ${gateway.url} (duet gateway), ` +
    `warm-up ${WARMUP_SECONDS} s, a sample every ${SAMPLE_SECONDS} s`);

const t0 = Date.now();
const rows = [];
const record = phase => {
    const row = { t: Math.round((Date.now() - t0) / 1000), phase, ...Object.fromEntries(servers.map(s => [s.label, sample(s)])) };
    rows.push(row);
    const done = loads.map(l => l.counts.modern + l.counts.legacySessions + l.counts.listens + l.counts.abrupt);
    console.log(`${String(row.t).padStart(5)} s ${phase.padEnd(8)} serve ${row.serve.rssMib.toFixed(1)} MiB ` +
        `${row.serve.fds} fds | gateway ${row.gateway.rssMib.toFixed(1)} MiB ${row.gateway.fds} fds ` +
        `${row.gateway.children} children | exchanges ${done.join(' / ')}`);
    return row;
};
// Pauses every load, lets the servers close what the clients dropped, samples the quiet state.
const quiet = async phase => {
    await Promise.all(loads.map(l => l.pause()));
    await sleep(SETTLE_MS);
    return record(phase);
};
const runFor = async seconds => {
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
        await sleep(Math.min(SAMPLE_SECONDS * 1000, until - Date.now()));
        record('traffic');
    }
};

// The gateway starts a pooled child only when every open one is busy, so the pool may still be growing after
// the warm-up: calls that overlap (countdown takes a second) fill it before the baseline is taken.
const fillPool = url =>
    Promise.all(Array.from({ length: 16 }, (_, i) =>
        post(url, modernRequest(`fill${i}`, 'tools/call', { name: 'countdown', arguments: { n: 20 } }, 'countdown'), false)));

record('start');
await runFor(WARMUP_SECONDS);
await Promise.all(loads.map(l => l.pause()));
await fillPool(gateway.url);
const baseline = await quiet('baseline');
loads.forEach(l => l.resume());
await runFor(SECONDS - WARMUP_SECONDS);
const end = await quiet('end');
await Promise.all(loads.map(l => l.stop()));

const problems = [];
console.log('\nserver   what        baseline       end       peak');
for (const s of servers) {
    const [b, e] = [baseline[s.label], end[s.label]];
    const peak = Math.max(...rows.map(r => r[s.label].rssMib));
    console.log(`${s.label.padEnd(8)} RSS MiB   ${b.rssMib.toFixed(1).padStart(9)} ${e.rssMib.toFixed(1).padStart(9)} ${peak.toFixed(1).padStart(9)}`);
    console.log(`${s.label.padEnd(8)} fds       ${String(b.fds).padStart(9)} ${String(e.fds).padStart(9)}`);
    console.log(`${s.label.padEnd(8)} children  ${String(b.children).padStart(9)} ${String(e.children).padStart(9)}`);
    if (e.rssMib - b.rssMib > RSS_BOUND_MIB)
        problems.push(`${s.label}: RSS grew ${(e.rssMib - b.rssMib).toFixed(1)} MiB after warm-up (bound ${RSS_BOUND_MIB} MiB)`);
    if (e.fds > b.fds) problems.push(`${s.label}: ${e.fds} descriptors at the end, ${b.fds} at the baseline`);
    if (e.children > b.children) problems.push(`${s.label}: ${e.children} children at the end, ${b.children} at the baseline`);
    if (e.zombies > 0) problems.push(`${s.label}: ${e.zombies} unreaped children at the end`);
}
for (const [i, l] of loads.entries()) {
    const c = l.counts;
    console.log(`${servers[i].label.padEnd(8)} traffic   ${c.modern} modern calls, ${c.legacySessions} legacy sessions ` +
        `(7 exchanges each), ${c.listens} listen streams dropped, ${c.abrupt} clients dropped mid-request, ` +
        `${c.failures} failures`);
    if (c.failures > 0) problems.push(`${servers[i].label}: ${c.failures} well-behaved requests failed, first: ${c.firstFailures.join('; ')}`);
}
for (const s of servers) s.child.kill('SIGTERM');
if (problems.length) {
    console.log(`\nsoak: FAILED\n  ${problems.join('\n  ')}`);
    process.exit(1);
}
console.log(`\nsoak: passed (${SECONDS} s; RSS bound +${RSS_BOUND_MIB} MiB after warm-up, descriptors and children back)`);
