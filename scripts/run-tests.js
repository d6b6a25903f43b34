#!/usr/bin/env node
// `npm test` after the build: the set-up every test file shares, made once (the packed package, its n8n install, one
// PostgreSQL cluster), then the jest runs on two lanes at once, then a check that nothing the run started is still
// running. Most of a real-engine file's time is spent waiting for processes, so two lanes fill two cores where one
// run would leave one idle.
//   node scripts/run-tests.js                 every job
//   node scripts/run-tests.js <jest args...>  one jest run with those arguments, on the same set-up
const { execFileSync, spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { MARKER, REGISTRY, leftovers, killAll } = require('./test-run/leftovers');

const ROOT = path.resolve(__dirname, '..');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const TIMES = path.join(ROOT, 'artifacts', 'test-times.json');
// two lanes keep the 2-core machine busy; SINGPASS_FLOWS_TEST_LANES for another machine
const LANES = Number(process.env.SINGPASS_FLOWS_TEST_LANES) || 2;

/**
 * The jobs, longest first (by the last run's times where there are some; a group that runs one at a time by the sum
 * of its jobs): the unit files (two workers) and the other
 * end-to-end files (three) as two jest runs, and every real-n8n file as a run of its own. A deployment of n8n in
 * queue mode (main, webhook process, two workers, Redis, PostgreSQL) is the heaviest thing a file starts: those
 * files (their names say `queue`) never run two at once.
 */
function jobs() {
  let last = {};
  try {
    last = Object.fromEntries(JSON.parse(fs.readFileSync(TIMES, 'utf8')).jobs.map((j) => [j.name, j.seconds]));
  } catch {
    // no earlier run on this machine: the defaults below
  }
  const n8nFiles = JSON.parse(execFileSync(process.execPath, [JEST, '--selectProjects', 'n8n', '--listTests', '--json'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
    .map((f) => path.relative(ROOT, f)).sort();
  const list = [
    { name: 'unit', args: ['--selectProjects', 'unit', '--maxWorkers=2'], guess: 220 },
    // three at once: these files mostly wait for the processes they start
    { name: 'e2e', args: ['--selectProjects', 'e2e', 'browser', '--maxWorkers=3'], guess: 360 },
    ...n8nFiles.map((file) => ({
      name: file, args: ['--selectProjects', 'n8n', '--runInBand', '--runTestsByPath', file],
      ...(/queue/.test(file) ? { guess: 250, exclusive: 'n8n queue mode' } : { guess: 150 }),
    })),
  ];
  const known = list.map((j) => ({ ...j, estimate: last[j.name] ?? j.guess }));
  // an exclusive job counts its whole group's time: those run one after another, so they must start first
  const chain = (j) => (j.exclusive ? known.filter((k) => k.exclusive === j.exclusive).reduce((t, k) => t + k.estimate, 0) : j.estimate);
  return known.sort((a, b) => chain(b) - chain(a) || b.estimate - a.estimate);
}

const marker = randomBytes(8).toString('hex');
process.env[MARKER] = marker;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-run-'));
const registry = path.join(work, 'servers');
fs.mkdirSync(registry);
process.env[REGISTRY] = registry;

/** The shared set-up; PostgreSQL only where it is installed (the files that need it say so). */
async function setUp() {
  const started = Date.now();
  require('../test/helpers/ts-register.js');
  const { installN8nStyle, packInto, RUN_N8N_NODES, RUN_TARBALL } = require('../test/helpers/package.ts');
  const { hasPostgres, startPostgres, RUN_POSTGRES } = require('../test/helpers/postgres.ts');
  const [tarball, pg] = await Promise.all([
    packInto(work),
    hasPostgres() ? startPostgres({ database: 'run', maxConnections: 400 }) : undefined,
  ]);
  process.env[RUN_TARBALL] = tarball;
  const nodes = path.join(work, 'n8n-nodes');
  await installN8nStyle(nodes, tarball);
  process.env[RUN_N8N_NODES] = nodes;
  if (pg) process.env[RUN_POSTGRES] = JSON.stringify({ host: pg.host, port: pg.port, user: pg.user, password: pg.password, socketDir: pg.socketDir });
  console.log(`set-up: package packed and installed once${pg ? ', one PostgreSQL cluster' : ''} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  return async () => {
    await pg?.stop();
  };
}

let runs = 0;
/** One jest run; its output is prefixed with the job's name, its results read from jest's JSON. */
function jest(job) {
  const outputFile = path.join(work, `run-${runs++}.json`);
  const tag = `[${job.name.replace(/^test\//, '').replace(/\.test\.ts$/, '')}]`;
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [JEST, ...job.args, '--json', `--outputFile=${outputFile}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${tag} ${line}\n`));
    }
    child.on('exit', (code, signal) => {
      let results;
      try {
        results = JSON.parse(fs.readFileSync(outputFile, 'utf8'));
      } catch {
        results = undefined;
      }
      resolve({ job, code: code ?? signal, results, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** The lanes over the job list: each takes the first job left that it may run, as soon as it is free. */
async function runJobs(list) {
  const running = new Set();
  const outcomes = [];
  const lane = async () => {
    while (list.length) {
      const i = list.findIndex((j) => !j.exclusive || ![...running].some((r) => r.exclusive === j.exclusive));
      if (i < 0) {
        await new Promise((r) => setTimeout(r, 1000)); // what is left waits for an exclusive job to end
        continue;
      }
      const [job] = list.splice(i, 1);
      running.add(job);
      outcomes.push(await jest(job));
      running.delete(job);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  return outcomes;
}

function summarize(outcomes, left, wallSeconds, whole) {
  let passed = 0; let failed = 0; let skipped = 0;
  const files = [];
  const names = [];
  const failures = [];
  for (const o of outcomes) {
    if (!o.results) {
      failed += 1;
      failures.push(`${o.job.name}: jest ended (${o.code}) without results`);
      continue;
    }
    const r = o.results;
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
    // a file that failed to run (a syntax error, a beforeAll that threw before any test) counts as one failure
    failed += r.testResults.filter((t) => t.status === 'failed' && t.assertionResults.every((a) => a.status !== 'failed')).length;
    for (const t of r.testResults) {
      const file = path.relative(ROOT, t.name);
      files.push({ job: o.job.name, file, seconds: (t.endTime - t.startTime) / 1000 });
      for (const a of t.assertionResults) names.push(`${a.status}\t${file}\t${a.fullName.replace(/\s+/g, ' ')}\t${((a.duration ?? 0) / 1000).toFixed(1)} s`);
      for (const a of t.assertionResults.filter((x) => x.status === 'failed')) failures.push(`${file}: ${a.fullName.replace(/\s+/g, ' ')}`);
      if (t.status === 'failed' && t.assertionResults.every((a) => a.status !== 'failed')) failures.push(`${file}: did not run (${(t.message || '').split('\n').find((l) => l.trim()) ?? 'no message'})`);
    }
  }
  // the leftover check is a test of the run itself
  if (left.length) failed += 1; else passed += 1;
  files.sort((a, b) => b.seconds - a.seconds);
  if (whole) {
    // the next run orders its jobs by these times
    fs.mkdirSync(path.dirname(TIMES), { recursive: true });
    fs.writeFileSync(TIMES, JSON.stringify({ wallSeconds, jobs: outcomes.map((o) => ({ name: o.job.name, seconds: o.seconds })), files }, null, 2));
    fs.writeFileSync(path.join(ROOT, 'artifacts', 'test-names.txt'), `${names.sort().join('\n')}\n`);
  }
  console.log('\nslowest files:');
  for (const f of files.slice(0, 12)) console.log(`  ${f.seconds.toFixed(0).padStart(5)} s  ${f.file}`);
  console.log('jobs:');
  for (const o of outcomes) console.log(`  ${o.seconds.toFixed(0).padStart(5)} s  ${o.job.name}`);
  console.log(`whole run: ${wallSeconds.toFixed(0)} s${whole ? ' (per file: artifacts/test-times.json; every test: artifacts/test-names.txt)' : ''}`);
  if (left.length) {
    console.log('left running after the run (now killed):');
    for (const p of left) console.log(`  pid ${p.pid}${p.ports.length ? ` ports ${p.ports.join(',')}` : ''}: ${p.command}`);
  } else {
    console.log('nothing left running: no process of this run, no port');
  }
  // last, so that a report cut to its end still names them
  if (failures.length) {
    console.log('failed:');
    for (const f of failures) console.log(`  ${f.slice(0, 240)}`);
  }
  return { passed, failed, skipped };
}

async function main() {
  const started = Date.now();
  const passthrough = process.argv.slice(2);
  const list = passthrough.length ? [{ name: 'jest', args: passthrough }] : jobs();
  let tearDown = async () => undefined;
  let outcomes = [];
  try {
    tearDown = await setUp();
    outcomes = await runJobs(list);
  } finally {
    await tearDown().catch((e) => console.log(`tear-down: ${e.message}`));
  }
  const left = leftovers(marker, [process.pid], registry);
  killAll(left);
  fs.rmSync(work, { recursive: true, force: true });
  const { passed, failed, skipped } = summarize(outcomes, left, (Date.now() - started) / 1000, !passthrough.length);
  const jestFailed = outcomes.some((o) => o.code !== 0);
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(failed || jestFailed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
