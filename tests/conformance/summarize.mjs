// Scores conformance suite runs against what the suite's requirements files say must run, for all three
// runners (tests/conformance/run-server-suite, run-gateway-suite, scripts/conformance-client). One unit:
// scenarios. Ends with exactly one line "scenarios: P passed, F failed, S skipped"; exits 1 when F > 0 or
// P == 0, 2 on a usage error (then no closing line).
//
// Expected, per run: every scenario requirements/<REVISION>.yaml of the pinned suite lists for the role (the
// scored list and every not_scored entry: pending, added-after-release, extension), except those an --exclude
// names. `conformance <role> --requirements REVISION` runs exactly that union, so a scenario of it with no
// checks.json crashed or never ran: it fails, by name, shown with the runner log's lines that name it. So
// does one with no SUCCESS (it proved nothing), any FAILURE, or any WARNING (the goal is 0 and 0). An
// extension is claimed by not excluding it. Excluded scenarios are listed with their reason and counted as
// skipped; an exclusion matching nothing is a usage error, so the lists in the scripts stay true. A result
// for a scenario outside the requirements fails too.
//
// The runner's exit code is checked: with --requirements it exits 1 iff a SCORED scenario has a FAILURE
// (including one the harness could not run, which writes nothing). So 0 is fine, and 1 is explained when a
// scored scenario failed or left no results: one not excluded is already counted failed; one excluded (the
// client's authorization scenarios, scored by the suite, not yet by Duet) explains it, and this is printed.
// Any other exit, or 1 with no such scenario, is counted as one failed entry "(runner)", with the log's end.
//
//   node summarize.mjs --role server|client [--exclude 'PATTERN=REASON']... \
//     --run REVISION RESULT_DIR RUNNER_EXIT_CODE RUNNER_LOG [--run ...]
// PATTERN is a scenario name, or a prefix ending in '*'. Test hook: DUET_CONFORMANCE_DROP=NAME[,NAME...]
// (NAME a scenario, or REVISION:scenario) ignores those results before scoring, as if they had vanished.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

function usage(message) {
  console.error(`summarize.mjs: ${message}`);
  process.exit(2);
}

// ---- arguments
let role;
const exclusions = []; // { pattern, reason }
const runs = []; // { revision, dir, exit, log }
const args = process.argv.slice(2);
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--role') role = args[++i];
  else if (args[i] === '--exclude') {
    const spec = args[++i] ?? '';
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1) usage(`--exclude needs PATTERN=REASON, got "${spec}"`);
    exclusions.push({ pattern: spec.slice(0, at), reason: spec.slice(at + 1) });
  } else if (args[i] === '--run') {
    const [revision, dir, exit, log] = args.slice(i + 1, i + 5);
    if (log === undefined || !/^\d+$/.test(exit)) usage('--run needs REVISION RESULT_DIR EXIT_CODE LOG');
    runs.push({ revision, dir, exit: Number(exit), log });
    i += 4;
  } else usage(`unknown argument "${args[i]}"`);
}
if (role !== 'server' && role !== 'client') usage('--role must be server or client');
if (runs.length === 0) usage('no --run given');

// ---- the requirements files, read with the YAML parser the suite itself uses
const here = dirname(fileURLToPath(import.meta.url));
const suiteDir = join(here, '../interop/node_modules/@modelcontextprotocol/conformance');
if (!existsSync(join(suiteDir, 'package.json'))) usage(`no conformance suite at ${suiteDir}`);
const YAML = createRequire(join(suiteDir, 'package.json'))('yaml');

// [{ name, kind }] in the file's order; kind is 'scored' or the not_scored reason.
function requiredScenarios(revision) {
  const file = join(suiteDir, 'requirements', `${revision}.yaml`);
  if (!existsSync(file)) usage(`no requirements file ${file}`);
  const doc = YAML.parse(readFileSync(file, 'utf8'));
  const scored = (doc[role] ?? []).map((name) => ({ name, kind: 'scored' }));
  const others = (doc.not_scored ?? [])
    .filter((e) => e.leg === role)
    .map((e) => ({ name: e.scenario, kind: e.reason }));
  if (scored.length === 0) usage(`requirements/${revision}.yaml lists no ${role} scenarios`);
  return [...scored, ...others];
}

const matches = (x, name) =>
  x.pattern.endsWith('*') ? name.startsWith(x.pattern.slice(0, -1)) : name === x.pattern;
const exclusionOf = (name) => exclusions.find((x) => matches(x, name));

// ---- results: DIR/[server-]<scenario>-<ISO timestamp>/checks.json, auth scenarios one level down (auth/...)
function* checkFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* checkFiles(path);
    else if (name === 'checks.json') yield path;
  }
}

function scenarioOf(file, root) {
  let name = relative(root, dirname(file)).split(sep).join('/');
  name = name.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
  return role === 'server' ? name.replace(/^server-/, '') : name;
}

const dropped = (process.env.DUET_CONFORMANCE_DROP ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const isDropped = (revision, name) => dropped.includes(name) || dropped.includes(`${revision}:${name}`);

// Map scenario -> { checks } or { error }; several result dirs of one scenario are merged.
function readResults(run) {
  const results = new Map();
  if (!existsSync(run.dir)) return results;
  for (const file of checkFiles(run.dir)) {
    const name = scenarioOf(file, run.dir);
    if (isDropped(run.revision, name)) {
      say(`  (DUET_CONFORMANCE_DROP: the results of ${name} are ignored)`);
      continue;
    }
    const entry = results.get(name) ?? { checks: [] };
    try {
      const checks = JSON.parse(readFileSync(file, 'utf8'));
      if (!Array.isArray(checks)) throw new Error('not an array of checks');
      entry.checks.push(...checks);
    } catch (e) {
      entry.error = `unreadable ${relative(run.dir, file)}: ${e.message}`;
    }
    results.set(name, entry);
  }
  return results;
}

const logLines = (run) => (existsSync(run.log) ? readFileSync(run.log, 'utf8').trimEnd().split('\n') : []);

// ---- scoring
let passed = 0;
let failed = 0;
let skipped = 0;
const say = (line) => console.log(line);
const plan = runs.map((run) => ({ run, required: requiredScenarios(run.revision) }));
const everyName = plan.flatMap(({ required }) => required.map((s) => s.name));
for (const x of exclusions) {
  if (!everyName.some((name) => matches(x, name))) {
    usage(`--exclude ${x.pattern} matches no ${role} scenario of ${runs.map((r) => r.revision).join(', ')}`);
  }
}

for (const { run, required } of plan) {
  say(`${basename(run.dir)} (requirements ${run.revision}, ${role} side; runner exit ${run.exit}):`);
  const results = readResults(run);
  const explainsExit = []; // scored scenarios that failed or left nothing
  for (const { name, kind } of required) {
    const tag = kind === 'scored' ? '' : ` [${kind}]`;
    const result = results.get(name);
    results.delete(name);
    const failing = !result || result.error || result.checks.some((c) => c.status === 'FAILURE');
    if (kind === 'scored' && failing) explainsExit.push(name);
    const excluded = exclusionOf(name);
    if (excluded) {
      ++skipped;
      say(`  - ${name}${tag}: skipped: ${excluded.reason}`);
      continue;
    }
    if (!result) {
      ++failed;
      say(`  ✗ ${name}${tag}: no results (no checks.json: the scenario crashed or never ran)`);
      for (const l of logLines(run).filter((l) => l.includes(name)).slice(0, 5)) say(`      log: ${l}`);
      continue;
    }
    if (result.error) {
      ++failed;
      say(`  ✗ ${name}${tag}: ${result.error}`);
      continue;
    }
    const count = (status) => result.checks.filter((c) => c.status === status).length;
    const [ok, bad, warn] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
    const good = ok > 0 && bad === 0 && warn === 0;
    good ? ++passed : ++failed;
    const why = ok === 0 && bad === 0 && warn === 0 ? ' (no SUCCESS: nothing was checked)' : '';
    say(`  ${good ? '✓' : '✗'} ${name}${tag}: ${ok} passed, ${bad} failed, ${warn} warnings${why}`);
    for (const c of result.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
      say(`      ${`${c.status} ${c.id}: ${c.errorMessage ?? c.description ?? ''}`.slice(0, 300)}`);
    }
  }
  for (const name of [...results.keys()].sort()) {
    ++failed;
    say(`  ✗ ${name}: has results but is not in requirements/${run.revision}.yaml for the ${role} side`);
  }
  const explained = run.exit === 0 || (run.exit === 1 && explainsExit.length > 0);
  if (run.exit !== 0 && explained) {
    const listed = (names) =>
      names.slice(0, 4).join(', ') + (names.length > 4 ? `, … (${names.length} in all)` : '');
    const counted = explainsExit.filter((name) => !exclusionOf(name));
    const excluded = explainsExit.filter((name) => exclusionOf(name));
    const parts = [];
    if (counted.length > 0) parts.push(`${listed(counted)} (counted above)`);
    if (excluded.length > 0) parts.push(`excluded above: ${listed(excluded)}`);
    say(`  runner exit 1, explained: scored scenarios failed or left no results: ${parts.join('; ')}`);
  }
  if (!explained) {
    ++failed;
    say(`  ✗ (runner): exit ${run.exit}, which no scenario result explains`);
  }
  if (!explained) {
    say(`  the end of ${run.log}:`);
    for (const l of logLines(run).slice(-15)) say(`      ${l}`);
  }
}
console.log(`scenarios: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
