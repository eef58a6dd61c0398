// Small helpers the bench scripts share: MCP request bodies and headers for both eras, a loopback POST, and
// /proc readings of a server process. No dependencies beyond Node itself.
import fs from 'node:fs';
import http from 'node:http';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A modern request: body plus the headers Streamable HTTP requires to mirror it. */
export function modernRequest(id, method, params = {}, name = undefined) {
    const headers = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
    if (name !== undefined) headers['Mcp-Name'] = name;
    return { body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }), headers };
}

/** A legacy request (or notification when id is undefined) inside a session, when there is one. */
export function legacyRequest(id, method, params = undefined, sessionId = undefined) {
    const headers = { 'MCP-Protocol-Version': LEGACY };
    if (sessionId) headers['Mcp-Session-Id'] = sessionId;
    const msg = { jsonrpc: '2.0', method };
    if (id !== undefined) msg.id = id;
    if (params !== undefined) msg.params = params;
    return { body: JSON.stringify(msg), headers };
}

export function initializeRequest(id = 0) {
    return {
        body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'initialize',
            params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'duet-bench', version: '1' } }
        }),
        headers: {}
    };
}

/** POSTs one message and resolves with {status, headers, body}. */
export function post(url, { body, headers }, agent = undefined) {
    return new Promise((resolve, reject) => {
        const req = http.request(
            url,
            {
                method: 'POST',
                agent,
                headers: {
                    'Content-Type': 'application/json',
                    Accept: 'application/json, text/event-stream',
                    ...headers
                }
            },
            res => {
                const chunks = [];
                res.on('data', c => chunks.push(c));
                res.on('end', () =>
                    resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() })
                );
                res.on('error', reject);
            }
        );
        req.on('error', reject);
        req.end(body);
    });
}

/** Opens a legacy session (initialize, then notifications/initialized) and returns its Mcp-Session-Id. */
export async function openLegacySession(url, agent = undefined) {
    const init = await post(url, initializeRequest(), agent);
    const sessionId = init.headers['mcp-session-id'];
    if (init.status !== 200 || !init.body.includes('"protocolVersion"') || !sessionId)
        throw new Error(`initialize failed: ${init.status} ${init.body.slice(0, 200)}`);
    const done = await post(url, legacyRequest(undefined, 'notifications/initialized', undefined, sessionId), agent);
    if (done.status !== 202) throw new Error(`notifications/initialized got ${done.status}`);
    return sessionId;
}

/** Resident set size of a process, in KiB. */
export function rssKb(pid) {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
}

/** CPU time (user + system) a process has used, in seconds. */
export function cpuSeconds(pid) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3), so utime (14) and stime (15) are at 11 and 12.
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
}

/**
 * CPU time of a process and everything below it, in seconds: the live ones, plus what its ended children used
 * (a gateway and the stdio servers it starts). 0 for a process that is gone.
 */
export function treeCpuSeconds(pid) {
    let total = 0;
    for (const p of processTree(pid)) {
        try {
            const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            // utime and stime (fields 14 and 15); for the root also cutime and cstime (16 and 17).
            total += Number(fields[11]) + Number(fields[12]) + (p === pid ? Number(fields[13]) + Number(fields[14]) : 0);
        } catch {
            // ended meanwhile
        }
    }
    return total / 100; // USER_HZ is 100 on Linux
}

/** A process and every live process below it (a gateway and the stdio server it started). */
export function processTree(pid) {
    const all = [pid];
    for (let i = 0; i < all.length; ++i) {
        let tasks = [];
        try {
            tasks = fs.readdirSync(`/proc/${all[i]}/task`);
        } catch {
            continue; // gone meanwhile
        }
        for (const tid of tasks) {
            try {
                const kids = fs.readFileSync(`/proc/${all[i]}/task/${tid}/children`, 'utf8').trim();
                if (kids) all.push(...kids.split(/\s+/).map(Number));
            } catch {
                // the thread ended meanwhile
            }
        }
    }
    return all;
}

/** Prints the one machine-readable line every bench tool ends with. */
export function printBench(figures) {
    console.log('BENCH ' + Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(' '));
}

export const sleep = ms => new Promise(r => setTimeout(r, ms));
