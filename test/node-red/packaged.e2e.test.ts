/**
 * The packed tarball, installed the way Node-RED's palette manager installs it:
 *  - Node 20 (this process) + Node-RED 4: `npm install --engine-strict --omit=dev` succeeds without pulling n8n's
 *    runtime (n8n-workflow is an optional peer), and every node type loads;
 *  - Node 24 (npm registry) + Node-RED 5: the same install, and the signing example shipped in the package signs a
 *    PDF end to end with a restart in between (pdfsig + qpdf).
 * First run downloads Node 24 and Node-RED 5 into ~/.cache/singpass-flows (about a minute); later runs reuse them.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { freePort, startNodeRedProcess, type NodeRedProcess } from './embedded';
import { packageTarball, releasePackage } from '../helpers/package';
import { installedPackages, node24, nodeRed5, paletteInstall } from './packaged';
import { signExampleWithRestart } from './signing-scenario';

const NODE_TYPES = [
  'singpass-sign-client', 'singpass-notification-secret', 'corppass-client', 'singpass-login-client',
  'singpass-sign-start', 'singpass-sign-apply', 'singpass-sign-prepare', 'singpass-sign-submit', 'singpass-sign-finish', 'singpass-sign-stored', 'singpass-cert-status', 'singpass-pdf-validation-data',
  'singpass-pdf-timestamp', 'singpass-pdf-verify', 'singpass-sign-webhook', 'singpass-keyset', 'corppass-login', 'singpass-login',
  'singpass-signer-page', 'singpass-officer-check',
];
const EXAMPLES = ['corppass-login-with-roles.json', 'corppass-officer-signing.json', 'key-set-endpoint.json', 'several-signers.json', 'singpass-document-signing.json', 'singpass-login.json'];
/** n8n's runtime and what made the palette install fail on Node 20 before n8n-workflow became an optional peer. */
const N8N_RUNTIME = ['n8n-workflow', 'n8n-core', 'isolated-vm'];

let tmp: string;
let tarball: string;
const running: NodeRedProcess[] = [];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-packaged-'));
  tarball = await packageTarball();
}, 120_000);

afterAll(async () => {
  for (const nr of running) await nr.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  releasePackage();
});

/** The node sets Node-RED loaded from our module (admin API), with any load error. */
async function loadedNodeSets(url: string): Promise<Array<{ name: string; types: string[]; enabled: boolean; err?: string; module: string }>> {
  const r = await fetch(`${url}/nodes`, { headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  const sets = (await r.json()) as Array<{ name: string; types: string[]; enabled: boolean; err?: string; module: string }>;
  return sets.filter((s) => s.module === '@singpass-flows/n8n-nodes-singpass');
}

test('Node 20: installs like the palette manager (engine-strict, no n8n runtime) and every node loads in Node-RED 4', async () => {
  const userDir = path.join(tmp, 'node20');
  const pkgDir = await paletteInstall(userDir, tarball);
  const installed = installedPackages(userDir);
  for (const name of N8N_RUNTIME) expect(installed).not.toContain(name);
  expect(installed).toEqual(expect.arrayContaining(['@singpass-flows/n8n-nodes-singpass', 'jose', 'pkijs']));
  expect(installed).not.toContain('node-red'); // a dev dependency stays out
  expect(installed).not.toContain('pdf-lib'); // a dev dependency since the demo signs a shipped sample
  expect(fs.readdirSync(path.join(pkgDir, 'examples')).sort()).toEqual(EXAMPLES);
  expect(fs.lstatSync(pkgDir).isSymbolicLink()).toBe(false); // a real install, not a link to the repository
  // the exports map: the public API and the sandbox resolve from the user's folder; internals do not
  const probe = (spec: string) => execFileSync(process.execPath, ['-e', `try { const m = require(${JSON.stringify(spec)}); console.log(Object.keys(m).join(',')) } catch (e) { console.log(e.code) }`], { cwd: userDir, encoding: 'utf8' }).trim();
  expect(probe('@singpass-flows/n8n-nodes-singpass').split(',')).toEqual(expect.arrayContaining(['createSigningEngine', 'PgSessionStore', 'FileSessionStore', 'verifyPdfSignatures']));
  expect(probe('@singpass-flows/n8n-nodes-singpass').split(',')).not.toContain('constantTimeEqual');
  expect(probe('@singpass-flows/n8n-nodes-singpass/sandbox').split(',')).toContain('startSandbox');
  expect(probe('@singpass-flows/n8n-nodes-singpass/dist/src/http')).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');

  const nr = await startNodeRedProcess({ userDir, port: await freePort(), packageDir: pkgDir });
  running.push(nr);
  expect(nr.version).toMatch(/^4\./);
  const sets = await loadedNodeSets(nr.url);
  expect(sets.filter((s) => s.err)).toEqual([]);
  expect(sets.flatMap((s) => s.types).sort()).toEqual([...NODE_TYPES].sort());
  // the editor's side of each node (form, help, icons) is served
  const html = await (await fetch(`${nr.url}/nodes`, { headers: { accept: 'text/html' } })).text();
  for (const t of NODE_TYPES) {
    expect(html).toContain(`data-template-name="${t}"`);
    expect(html).toContain(`data-help-name="${t}"`);
  }
  expect((await fetch(`${nr.url}/icons/@singpass-flows/n8n-nodes-singpass/singpass-sign.svg`)).status).toBe(200);
  // Import ▸ Examples: the editor lists the module's examples from the library API and imports them from there
  const listing = await (await fetch(`${nr.url}/library/examples/flows/@singpass-flows/n8n-nodes-singpass`)).text();
  for (const f of EXAMPLES) expect(listing).toContain(`"${f.replace(/\.json$/, '')}"`);
  const imported = await fetch(`${nr.url}/library/examples/flows/@singpass-flows/n8n-nodes-singpass/singpass-document-signing`);
  expect(await imported.json()).toEqual(JSON.parse(fs.readFileSync(path.join(pkgDir, 'examples', 'singpass-document-signing.json'), 'utf8')));
}, 600_000);

describe('Node 24 + Node-RED 5', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, webhookRetryDelayMs: 500 });
  });
  afterAll(() => sb?.close());

  test('installs like the palette manager, loads, and the shipped signing example signs a PDF across a restart', async () => {
    const node = await node24();
    const nodeRedDir = await nodeRed5(node);
    const userDir = path.join(tmp, 'node24', 'userDir');
    const packageDir = await paletteInstall(userDir, tarball, node);
    for (const name of N8N_RUNTIME) expect(installedPackages(userDir)).not.toContain(name);
    await signExampleWithRestart({
      sb, tmp: path.join(tmp, 'node24'), version: /^5\./, node, nodeRedDir, packageDir,
      running: (nr) => running.push(nr),
    });
  }, 900_000);
});
