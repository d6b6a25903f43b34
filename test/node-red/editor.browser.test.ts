/**
 * The Node-RED editor in a real browser (Debian's chromium driven by playwright-core): this package's nodes are in
 * the palette under "Singpass" with their labels, the document-signing example is drawn with every node, and an
 * example node's help opens in the sidebar. SF_UPDATE_DOCS=1 writes the screenshot docs/node-red.md shows
 * (docs/node-red-editor.png); otherwise it goes to a temp folder.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from '../helpers/chromium';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { REPO_ROOT, deploy, freePort, startNodeRedProcess, type NodeRedProcess } from './embedded';
import { exampleFlow } from './signing-scenario';

const PALETTE = {
  'singpass-sign-start': 'start signing', 'singpass-sign-apply': 'apply event', 'singpass-sign-prepare': 'prepare signature', 'singpass-sign-submit': 'submit hash', 'singpass-sign-finish': 'finish signing', 'singpass-sign-stored': 'signed PDF stored',
  'singpass-sign-webhook': 'signing webhook', 'singpass-cert-status': 'certificate status', 'singpass-pdf-validation-data': 'add validation data',
  'singpass-pdf-timestamp': 'document timestamp', 'singpass-pdf-verify': 'verify PDF', 'singpass-keyset': 'key set',
  'corppass-login': 'Corppass login', 'singpass-login': 'Singpass login', 'singpass-signer-page': 'signer page', 'singpass-officer-check': 'officer check',
};

let tmp: string;
let sb: Sandbox;
let nr: NodeRedProcess;
let browser: Browser;

beforeAll(async () => {
  requireChromium();
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-editor-'));
  sb = await startSandbox({ port: 0 });
  nr = await startNodeRedProcess({ userDir: path.join(tmp, 'userDir'), port: await freePort() });
  const keys = await generateClientKeys();
  // plus a Corppass client saved before the Profile setting existed (no credentials: only its editor dialog is used)
  const oldCorppassClient = { id: 'old-cp', type: 'corppass-client', name: 'saved before Profile', environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId: 'old', redirectUri: 'http://127.0.0.1:1880/cb' };
  await deploy(nr.url, [...exampleFlow(sb, keys.signing), oldCorppassClient]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the palette shows the Singpass nodes and the editor draws the signing example with its help', async () => {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(nr.url);
  const first = page.locator('.red-ui-palette-node[data-palette-type="singpass-sign-start"]');
  await first.waitFor({ timeout: 120_000 });

  // the palette: every node under the Singpass category, with its label
  const category = page.locator('#red-ui-palette-container-Singpass');
  expect((await category.locator('.red-ui-palette-header').innerText()).trim()).toBe('Singpass');
  for (const [type, label] of Object.entries(PALETTE)) {
    const entry = category.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
    expect(await entry.count()).toBe(1);
    expect((await entry.innerText()).replace(/\s+/g, ' ').trim()).toBe(label); // long labels wrap
  }

  // the flow: all the example's nodes on its tab (config nodes and the tab itself are not drawn)
  const example = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'singpass-document-signing.json'), 'utf8')) as Array<{ z?: string }>;
  const drawn = example.filter((n) => n.z).length;
  await page.locator('.red-ui-tab-label', { hasText: 'Singpass document signing' }).click();
  await page.waitForFunction((n) => document.querySelectorAll('#red-ui-workspace-chart .red-ui-flow-node-group').length >= n, drawn);
  expect(await page.locator('#red-ui-workspace-chart .red-ui-flow-node-group').count()).toBe(drawn);

  // show only the Singpass category in the palette for the picture
  await page.evaluate(() => {
    document.querySelectorAll<HTMLElement>('.red-ui-palette-category').forEach((c) => {
      if (c.id !== 'red-ui-palette-container-Singpass' && c.querySelector<HTMLElement>('.red-ui-palette-content')?.offsetParent) {
        c.querySelector<HTMLElement>('.red-ui-palette-header')?.click();
      }
    });
  });
  await page.waitForTimeout(500); // the collapse animation

  // the help of a selected node opens in the sidebar
  await page.evaluate(() => (window as unknown as { RED: { sidebar: { help: { show(type: string): void } } } }).RED.sidebar.help.show('singpass-sign-start'));
  await page.waitForFunction(() => /Starts a Singpass signing session/.test(document.getElementById('red-ui-sidebar')?.textContent ?? ''), undefined, { timeout: 30_000 });

  const out = process.env.SF_UPDATE_DOCS === '1' ? path.join(REPO_ROOT, 'docs', 'node-red-editor.png') : path.join(tmp, 'node-red-editor.png');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  expect(fs.statSync(out).size).toBeGreaterThan(10_000);
}, 300_000);

test('Corppass client dialog: a new client starts on Profile FAPI 2.0, one saved without the setting shows legacy', async () => {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(nr.url);
  await page.locator('.red-ui-palette-node[data-palette-type="corppass-login"]').waitFor({ timeout: 120_000 });
  type Red = { RED: { editor: { editConfig(name: string, type: string, id: string): void }; tray: { close(): void } } };
  const profileIn = async (id: string) => {
    await page.evaluate((configId) => (window as unknown as Red).RED.editor.editConfig('', 'corppass-client', configId), id);
    const select = page.locator('#node-config-input-profile');
    await select.waitFor({ state: 'visible', timeout: 30_000 });
    const out = { profile: await select.inputValue(), appTypeShown: await page.locator('#node-config-input-appType').isVisible() };
    await page.evaluate(() => (window as unknown as Red).RED.tray.close());
    await select.waitFor({ state: 'detached', timeout: 30_000 });
    return out;
  };
  expect(await profileIn('_ADD_')).toEqual({ profile: 'fapi', appTypeShown: true });
  expect(await profileIn('old-cp')).toEqual({ profile: 'legacy', appTypeShown: false });
}, 300_000);

test('Sign API client dialog: the session store defaults to the folder; PostgreSQL shows its connection fields instead', async () => {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(nr.url);
  await page.locator('.red-ui-palette-node[data-palette-type="singpass-sign-start"]').waitFor({ timeout: 120_000 });
  type Red = { RED: { editor: { editConfig(name: string, type: string, id: string): void }; tray: { close(): void } } };
  // the example's client: opens on the folder store
  await page.evaluate(() => (window as unknown as Red).RED.editor.editConfig('', 'singpass-sign-client', 'sf-sign-client'));
  const select = page.locator('#node-config-input-sessionStore');
  await select.waitFor({ state: 'visible', timeout: 30_000 });
  const shown = async () => ({
    store: await select.inputValue(), folder: await page.locator('#node-config-input-sessionDir').isVisible(),
    host: await page.locator('#node-config-input-pgHost').isVisible(), password: await page.locator('#node-config-input-pgPassword').isVisible(),
  });
  expect(await shown()).toEqual({ store: 'folder', folder: true, host: false, password: false });
  await select.selectOption('postgres');
  expect(await shown()).toEqual({ store: 'postgres', folder: false, host: true, password: true });
  expect(await page.locator('#node-config-input-pgPassword').getAttribute('type')).toBe('password');
  await page.evaluate(() => (window as unknown as Red).RED.tray.close());
}, 300_000);
