// Summarises conformance suite results: reads every checks.json under the given result directories and
// prints one line per scenario, then a closing line "scenarios: P passed, F failed".
//
// A scenario passes when it has at least one SUCCESS and no FAILURE and no WARNING: a warning is a failure
// here (the goal is 0 and 0), and a scenario that checked nothing proved nothing. Extension scenarios the
// issue leaves out (tasks, skills) are listed as skipped and not counted.
//
//   node summarize.mjs RESULT_DIR... [--skip PREFIX]...
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, basename, dirname } from 'node:path';

const args = process.argv.slice(2);
const skip = [];
const dirs = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--skip') skip.push(args[++i]);
  else dirs.push(args[i]);
}

function* checkFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* checkFiles(path);
    else if (name === 'checks.json') yield path;
  }
}

// ".../server-tools-list-2026-11-30T12-53-04-575Z/checks.json" -> "tools-list"
function scenarioOf(file, root) {
  const leaf = basename(dirname(file)).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^server-/, '');
  const parent = dirname(dirname(file));
  return parent === root ? leaf : `${basename(parent)}/${leaf}`;
}

let passed = 0;
let failed = 0;
for (const dir of dirs) {
  const rows = [];
  for (const file of checkFiles(dir)) {
    const scenario = scenarioOf(file, dir);
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    const count = (s) => checks.filter((c) => c.status === s).length;
    const row = { scenario, ok: count('SUCCESS'), bad: count('FAILURE'), warn: count('WARNING') };
    row.problems = checks
      .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
      .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`.slice(0, 300));
    rows.push(row);
  }
  rows.sort((a, b) => a.scenario.localeCompare(b.scenario));
  console.log(`${basename(dir)}:`);
  for (const r of rows) {
    if (skip.some((p) => r.scenario.startsWith(p))) {
      console.log(`  - ${r.scenario}: skipped (extension)`);
      continue;
    }
    const good = r.bad === 0 && r.warn === 0 && r.ok > 0;
    good ? ++passed : ++failed;
    const why = r.ok === 0 && r.bad === 0 && r.warn === 0 ? ' (nothing was checked)' : '';
    console.log(`  ${good ? '✓' : '✗'} ${r.scenario}: ${r.ok} passed, ${r.bad} failed, ${r.warn} warnings${why}`);
    for (const p of r.problems) console.log(`      ${p}`);
  }
}
console.log(`scenarios: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
