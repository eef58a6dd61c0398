#!/usr/bin/env node
// Validates JSON values against one definition of an official MCP schema, one check per line.
//
// Input, one JSON object per stdin line:
//   {"version":"2026-07-28","type":"CallToolResult","value":{...}}
//   {"version":"2025-06-18","type":"ListToolsResult","value":{...},"closed":true}
// `type` names a definition of <spec-dir>/<version>/schema.json (`$defs` in the 2020-12 schemas,
// `definitions` in the draft-07 one). `closed` also rejects properties the schema does not declare
// (see closeSchema).
//
// Output, exactly one JSON line per input line, in order:
//   {"ok":true}
//   {"ok":false,"errors":"..."}                  the value does not validate
//   {"ok":false,"errors":"...","badCheck":true}  the check itself is wrong (bad line, unknown version/type)
//
// The schema directory is --spec-dir DIR, else $DUET_SPEC_DIR, else ../../../shared/spec from this file (the
// shared checkout next to the repository). Ajv comes from tests/interop/node_modules (or $DUET_INTEROP_DIR).
// Each schema is compiled once per process, so callers batch many checks into one run.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function option(name) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : undefined;
}

const specDir = resolve(
    option('--spec-dir') ?? process.env.DUET_SPEC_DIR ?? join(here, '../../../shared/spec'));
const interopDir = resolve(process.env.DUET_INTEROP_DIR ?? join(here, '../interop'));
const require = createRequire(join(interopDir, 'package.json'));
const Ajv = require('ajv').default;
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

// Properties whose values are open by design, never closed: metadata maps, embedded JSON Schemas, free JSON.
const openProperties = new Set([
    '_meta', 'inputSchema', 'outputSchema', 'requestedSchema', 'structuredContent', 'experimental',
    'arguments',
]);

// The closed-world variant of a schema: every object schema that lists `properties` and says nothing about
// other properties gets `additionalProperties: false`, so a field the version does not define fails. Metadata
// objects, embedded schemas and the inline branches of an allOf (where closing one branch would reject the
// other's properties) stay open. A definition reached by $ref from an allOf is still closed, so closed checks
// of the few allOf types (task results, some errors) may reject valid values: use open checks for those.
function closeSchema(node, name, keepOpen = false) {
    if (Array.isArray(node))
        return node.map((n) => closeSchema(n, undefined, keepOpen));
    if (node === null || typeof node !== 'object')
        return node;
    if (name !== undefined && (openProperties.has(name) || name.endsWith('MetaObject')))
        return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
        if (k === 'properties' && v && typeof v === 'object' && !Array.isArray(v)) {
            out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, closeSchema(s, p)]));
        } else if (k === 'allOf' && Array.isArray(v)) {
            out[k] = v.map((n) => closeSchema(n, undefined, true));
        } else if ((k === '$defs' || k === 'definitions') && v && typeof v === 'object') {
            out[k] = Object.fromEntries(Object.entries(v).map(([d, s]) => [d, closeSchema(s, d)]));
        } else {
            out[k] = closeSchema(v);
        }
    }
    if (!keepOpen && out.properties && !('additionalProperties' in out) && !('unevaluatedProperties' in out))
        out.additionalProperties = false;
    return out;
}

const versions = new Map(); // version -> { ajv, defsKey, definitions }
const validators = new Map(); // "version|closed|type" -> compiled validator

function loadVersion(version) {
    if (versions.has(version))
        return versions.get(version);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(version))
        throw new Error(`not a protocol version: ${JSON.stringify(version)}`);
    const file = join(specDir, version, 'schema.json');
    if (!existsSync(file))
        throw new Error(`no schema for ${version} at ${file}`);
    const schema = JSON.parse(readFileSync(file, 'utf8'));
    const draft07 = String(schema.$schema ?? '').includes('draft-07');
    const defsKey = draft07 ? 'definitions' : '$defs';
    const options = { strict: false, allErrors: true, validateSchema: false };
    const ajv = draft07 ? new Ajv(options) : new Ajv2020(options);
    addFormats(ajv);
    // Annotations the spec adds to embedded schemas (e.g. x-mcp-header) are keywords Ajv does not know.
    ajv.addKeyword({ keyword: 'x-mcp-header', schemaType: ['string', 'object', 'boolean'] });
    const { $schema: _ignored, ...body } = schema;
    ajv.addSchema(body, `mcp-${version}`);
    ajv.addSchema(closeSchema(body), `mcp-${version}-closed`);
    const entry = { ajv, defsKey, definitions: schema[defsKey] ?? {} };
    versions.set(version, entry);
    return entry;
}

function validatorFor(version, type, closed) {
    const key = `${version}|${closed ? 'closed' : 'open'}|${type}`;
    if (validators.has(key))
        return validators.get(key);
    const { ajv, defsKey, definitions } = loadVersion(version);
    if (typeof type !== 'string' || !Object.hasOwn(definitions, type))
        throw new Error(`${version} defines no ${JSON.stringify(type)}`);
    const id = closed ? `mcp-${version}-closed` : `mcp-${version}`;
    const validate = ajv.compile({ $ref: `${id}#/${defsKey}/${type}` });
    validators.set(key, validate);
    return validate;
}

function check(line) {
    let request;
    try {
        request = JSON.parse(line);
    } catch (e) {
        return { ok: false, errors: `input line is not JSON: ${e.message}`, badCheck: true };
    }
    if (request === null || typeof request !== 'object' || !('value' in request))
        return { ok: false, errors: 'input line needs "version", "type" and "value"', badCheck: true };
    let validate;
    try {
        validate = validatorFor(request.version, request.type, request.closed === true);
    } catch (e) {
        return { ok: false, errors: e.message, badCheck: true };
    }
    if (validate(request.value))
        return { ok: true };
    const errors = validate.errors
        .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`)
        .join('; ');
    return { ok: false, errors };
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
    process.stdout.write(JSON.stringify(check(line)) + '\n');
}
