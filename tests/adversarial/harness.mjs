// What every adversarial scenario shares: the real `duet` binary as a child process, what /proc says about it,
// a well-behaved client whose every exchange must succeed within a bound while an attack goes on, and
// failure that names what was expected and what happened.
//
//     const server = await startDuet(binary, ['serve'], { nofile: 1024 });
//     const good = goodClient(server.url);          // probes until stopped, records every failure
//     ... the attack ...
//     await good.stop();                            // throws if any probe failed or was late
//     await server.stop();
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';

import { cpuSeconds, initializeRequest, legacyRequest, modernRequest, rssKb, sleep } from '../../bench/mcp.mjs';

export { cpuSeconds, rssKb, sleep };

/** How long one good-client exchange may take while an attack goes on: generous for a loaded 2-core machine. */
export const PROBE_BOUND_MS = 3000;

export class ScenarioFailure extends Error {}

export function check(condition, message) {
    if (!condition) throw new ScenarioFailure(message);
}

/** The arguments every scenario takes: the duet binary, then flags (--sanitized). */
export function scenarioArgs() {
    const [binary, ...flags] = process.argv.slice(2);
    if (!binary || !fs.existsSync(binary)) {
        console.error(`usage: node ${process.argv[1]} DUET_BINARY [--sanitized] [duet flags after --]`);
        process.exit(2);
    }
    const dashes = flags.indexOf('--');
    return {
        binary,
        sanitized: flags.includes('--sanitized'),
        // Extra flags for the server under test: how a scenario is shown to fail without its defence.
        extra: dashes >= 0 ? flags.slice(dashes + 1) : []
    };
}

/**
 * Runs a scenario: its servers are stopped whatever happens, and each must then exit 0 (a sanitizer's report
 * of what the attack broke comes at exit). A failure exits 1 with its message and the servers' logs.
 */
export async function runScenario(name, body) {
    const started = [];
    const track = server => (started.push(server), server);
    const t0 = Date.now();
    let failure = null;
    try {
        await body(track);
    } catch (e) {
        failure = e instanceof ScenarioFailure ? e.message : e.stack;
    }
    for (const s of started) {
        const { code, signal } = await s.stop();
        if (!failure && code !== 0)
            failure = `${s.label} should exit 0 when stopped after the attack; it exited ${code ?? signal}`;
    }
    if (!failure) {
        console.log(`${name}: passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        process.exit(0);
    }
    console.error(`${name}: FAILED: ${failure}`);
    for (const s of started) console.error(`--- last of ${s.label}'s log ---\n${s.logTail()}`);
    process.exit(1);
}

/**
 * Starts `duet ARGS --port 0` (serve or gateway) and resolves once it printed its URL. `nofile` lowers its
 * descriptor limit (through the shell's ulimit, since Node cannot set a child's rlimit).
 */
export function startDuet(binary, args, { nofile, label = args[0] } = {}) {
    const argv = [binary, ...args, '--port', '0'];
    const child = nofile
        ? spawn('sh', ['-c', `ulimit -n ${nofile} && exec "$@"`, 'sh', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const watches = [];
    child.stderr.on('data', d => {
        const text = d.toString();
        // A watched pattern is looked for in the whole stream (the chunk with the end of the one before, so a
        // match split across two chunks counts), since the tail kept below may be too short to hold it.
        for (const w of watches) if (!w.seen) w.seen = w.pattern.test(log.slice(-512) + text);
        // Only the tail: a gateway relays its children's stderr, which a scenario may flood on purpose.
        log = (log + text).slice(-8192);
    });
    let exited = null;
    const exit = new Promise(resolve => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
    const server = {
        label,
        pid: child.pid,
        url: '',
        logTail: () => log,
        /** From now on, watch the log for `pattern`; the returned function says whether it was seen. */
        watchLog(pattern) {
            const w = { pattern, seen: false };
            watches.push(w);
            return () => w.seen;
        },
        exited: () => exited,
        async stop() {
            if (exited) return exited;
            child.kill('SIGTERM');
            const done = await Promise.race([exit, sleep(15000).then(() => null)]);
            if (done) return done;
            child.kill('SIGKILL');
            return exit;
        }
    };
    return new Promise((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new ScenarioFailure(`${label} printed no URL within 30 s: ${log}`)), 30000);
        child.stdout.on('data', d => {
            out += d.toString();
            const nl = out.indexOf('\n');
            if (nl < 0 || server.url) return;
            server.url = out.slice(0, nl).trim();
            clearTimeout(timer);
            resolve(server);
        });
        exit.then(e => {
            clearTimeout(timer);
            reject(new ScenarioFailure(`${label} exited (${e.code ?? e.signal}) before printing its URL: ${log}`));
        });
    });
}

// ---- /proc ------------------------------------------------------------------------------------------------

export function fdCount(pid) {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/** The process ids of a process's children, each with its state letter (Z: exited, not reaped). */
export function childrenOf(pid) {
    const out = [];
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        let kids = '';
        try {
            kids = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        } catch {
            continue; // the thread ended meanwhile
        }
        for (const kid of kids ? kids.split(/\s+/) : []) {
            try {
                const stat = fs.readFileSync(`/proc/${kid}/stat`, 'utf8');
                out.push({ pid: Number(kid), state: stat[stat.lastIndexOf(')') + 2] });
            } catch {
                // reaped meanwhile
            }
        }
    }
    return out;
}

/** Waits until `holds()` is true; false when it is not within `limitMs`. */
export async function eventually(holds, limitMs = 10000) {
    const deadline = Date.now() + limitMs;
    for (;;) {
        if (await holds()) return true;
        if (Date.now() >= deadline) return false;
        await sleep(100);
    }
}

/** The process's descriptors come back to `baseline` (or fewer) within `limitMs`, else a failure. */
export async function expectFdsBack(server, baseline, limitMs = 10000) {
    const back = await eventually(() => fdCount(server.pid) <= baseline, limitMs);
    check(back, `${server.label}'s descriptors should return to ${baseline} within ${limitMs} ms of the ` +
        `attack's end; they are ${fdCount(server.pid)}`);
}

// ---- the well-behaved client ------------------------------------------------------------------------------

/**
 * POSTs one message on a fresh connection and resolves with {status, headers, body}; rejects when no whole
 * answer came within `boundMs`. `localAddress` picks the client's address (loopback has all of 127/8).
 */
export function exchange(url, { body, headers = {} }, { method = 'POST', boundMs = PROBE_BOUND_MS, localAddress } = {}) {
    return new Promise((resolve, reject) => {
        const req = http.request(url, {
            method,
            agent: false,
            localAddress,
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }
        });
        const timer = setTimeout(() => {
            req.destroy();
            reject(new Error(`no answer to ${method} within ${boundMs} ms`));
        }, boundMs);
        req.on('response', res => {
            const chunks = [];
            res.on('data', c => chunks.push(c));
            res.on('end', () => {
                clearTimeout(timer);
                resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() });
            });
            res.on('error', e => (clearTimeout(timer), reject(e)));
        });
        req.on('error', e => (clearTimeout(timer), reject(e)));
        req.end(body);
    });
}

/** The one JSON-RPC message of an answer, whether plain JSON or an SSE stream (its last data line). */
export function messageOf(reply) {
    if (String(reply.headers['content-type']).startsWith('text/event-stream')) {
        const data = reply.body.split('\n').filter(l => l.startsWith('data:') && l.length > 5);
        return JSON.parse(data.at(-1).slice(5));
    }
    return JSON.parse(reply.body);
}

function expectEcho(reply, text, what) {
    check(reply.status === 200, `${what}: expected 200, got ${reply.status}: ${reply.body.slice(0, 300)}`);
    const m = messageOf(reply);
    const said = m.result?.content?.[0]?.text;
    check(said === text, `${what}: expected the echo "${text}", got ${JSON.stringify(m).slice(0, 300)}`);
}

let probeId = 0;

/** A modern tools/call of `echo`, answered with its text within the bound. */
export async function modernProbe(url, options = {}) {
    const text = `modern probe ${++probeId}`;
    const reply = await exchange(url, modernRequest(probeId, 'tools/call', { name: 'echo', arguments: { text } }, 'echo'), options);
    expectEcho(reply, text, 'modern tools/call');
}

/** A legacy session: initialize, initialized, a tools/call of `echo`, DELETE; each step within the bound. */
export async function legacyProbe(url, options = {}) {
    const init = await exchange(url, initializeRequest(++probeId), options);
    const session = init.headers['mcp-session-id'];
    check(init.status === 200 && session, `legacy initialize: expected 200 with Mcp-Session-Id, got ${init.status}: ${init.body.slice(0, 300)}`);
    const done = await exchange(url, legacyRequest(undefined, 'notifications/initialized', undefined, session), options);
    check(done.status === 202, `notifications/initialized: expected 202, got ${done.status}`);
    const text = `legacy probe ${probeId}`;
    const call = await exchange(url, legacyRequest(++probeId, 'tools/call', { name: 'echo', arguments: { text } }, session), options);
    expectEcho(call, text, 'legacy tools/call');
    const end = await exchange(url, { headers: { 'Mcp-Session-Id': session } }, { ...options, method: 'DELETE' });
    check(end.status === 200 || end.status === 204, `DELETE of the session: expected 200 or 204, got ${end.status}`);
}

/**
 * A well-behaved client probing both eras in turn until stopped. stop() resolves with how many probes
 * passed and the slowest, and throws the first failure (a wrong answer, or one later than the bound).
 */
export function goodClient(url, { localAddress, boundMs = PROBE_BOUND_MS, pauseMs = 200 } = {}) {
    let running = true;
    let passed = 0;
    let slowest = 0;
    let failure = null;
    const loop = (async () => {
        while (running && !failure) {
            for (const probe of [modernProbe, legacyProbe]) {
                const t0 = Date.now();
                try {
                    await probe(url, { localAddress, boundMs });
                    passed += 1;
                    slowest = Math.max(slowest, Date.now() - t0);
                } catch (e) {
                    failure = `a well-behaved client's ${probe.name} failed during the attack: ${e.message}`;
                    break;
                }
            }
            await sleep(pauseMs);
        }
    })();
    return {
        failed: () => failure,
        /** Stops once at least `minProbes` passed (so a quick attack still sees some), at most 20 s later. */
        async stop({ minProbes = 4 } = {}) {
            await eventually(() => failure || passed >= minProbes, 20000);
            running = false;
            await loop;
            check(!failure, failure);
            check(passed > 0, 'the well-behaved client completed no probe during the attack');
            return { passed, slowest };
        }
    };
}

// ---- attackers' raw connections ---------------------------------------------------------------------------

/** Opens `count` TCP connections to the server of `url`, `batch` at a time; resolves with the sockets. */
export async function openConnections(url, count, { batch = 100, localAddress } = {}) {
    const { hostname, port } = new URL(url);
    const sockets = [];
    for (let i = 0; i < count; i += batch) {
        const opened = [];
        for (let j = i; j < Math.min(count, i + batch); ++j) {
            opened.push(
                new Promise((resolve, reject) => {
                    const s = net.connect({ host: hostname, port: Number(port), localAddress });
                    s.on('connect', () => resolve(s));
                    s.on('error', reject);
                })
            );
        }
        sockets.push(...(await Promise.all(opened)));
    }
    for (const s of sockets) {
        s.on('error', () => {}); // a reset by the server is what some scenarios wait for
        s.on('data', () => {});
    }
    return sockets;
}

/** Resolves once every socket was closed by the server, or with the open ones after `limitMs`. */
export async function closedByServer(sockets, limitMs) {
    await eventually(() => sockets.every(s => s.closed || s.readableEnded), limitMs);
    return sockets.filter(s => !(s.closed || s.readableEnded));
}

/** The head of a modern POST to `url` announcing `contentLength` bytes of body. */
export function requestHead(url, contentLength) {
    const { host, pathname } = new URL(url);
    return (
        `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n` +
        `Content-Length: ${contentLength}\r\n\r\n`
    );
}
