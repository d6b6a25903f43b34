/**
 * The package as users get it, made once per test run. `npm test` (scripts/run-tests.js) packs it and installs it the
 * way n8n installs a community package before any file starts, and names both in the environment; a file run on its
 * own (`npx jest test/…`) makes its own copies, and removes them with `releasePackage()`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './repo';

const run = promisify(execFile);

/** Set by the test runner: the packed tarball, and an n8n `nodes` folder with it installed. */
export const RUN_TARBALL = 'SINGPASS_FLOWS_TARBALL';
export const RUN_N8N_NODES = 'SINGPASS_FLOWS_N8N_NODES';

let ownDir: string | undefined;
let packed: Promise<string> | undefined;
let nodes: Promise<string> | undefined;

function scratch(): string {
  ownDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-pack-'));
  return ownDir;
}

/** `npm pack` of the built repository (npm test builds first) into `dest`; returns the tarball's path. */
export async function packInto(dest: string): Promise<string> {
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
  const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
  return path.join(dest, filename);
}

/** The run's tarball, or one packed for this file. */
export function packageTarball(): Promise<string> {
  const shared = process.env[RUN_TARBALL];
  if (shared && fs.existsSync(shared)) return Promise.resolve(shared);
  packed ??= packInto(scratch());
  return packed;
}

/**
 * Install `tarball` into `nodesDir` as n8n installs a community package: `npm install` of the tarball, runtime
 * dependencies only, no scripts.
 */
export async function installN8nStyle(nodesDir: string, tarball: string): Promise<void> {
  fs.mkdirSync(nodesDir, { recursive: true });
  fs.writeFileSync(path.join(nodesDir, 'package.json'), JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }));
  await run('npm', ['install', '--ignore-scripts', '--omit=dev', '--omit=peer', '--omit=optional', '--no-audit', '--no-fund', '--no-package-lock', tarball], {
    cwd: nodesDir, maxBuffer: 64 * 1024 * 1024, timeout: 600_000,
  });
}

/** An n8n `nodes` folder with the package installed: the run's, or one made for this file. */
export function n8nNodesFolder(): Promise<string> {
  const shared = process.env[RUN_N8N_NODES];
  if (shared && fs.existsSync(path.join(shared, 'node_modules'))) return Promise.resolve(shared);
  nodes ??= (async () => {
    const dir = path.join(scratch(), 'nodes');
    await installN8nStyle(dir, await packageTarball());
    return dir;
  })();
  return nodes;
}

/** A copy of the installed package in `userFolder/.n8n/nodes` (what each host of a deployment gets from one install). */
export async function installIntoN8nUserFolder(userFolder: string): Promise<string> {
  const target = path.join(userFolder, '.n8n', 'nodes');
  fs.cpSync(await n8nNodesFolder(), target, { recursive: true, verbatimSymlinks: true });
  return path.join(target, 'node_modules', '@singpass-flows', 'n8n-nodes-singpass');
}

/** Remove what this file packed or installed for itself (never the run's). */
export function releasePackage(): void {
  if (ownDir) fs.rmSync(ownDir, { recursive: true, force: true });
  ownDir = undefined;
  packed = undefined;
  nodes = undefined;
}
