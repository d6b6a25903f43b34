/**
 * The n8n editor in a real headless Chromium (Debian's `chromium`, driven by playwright-core): an owner account is
 * set up through n8n's REST API, a workflow is opened on the canvas and the node panel searched, so a test can check
 * what a user sees — our nodes, with their icons loaded — and save a screenshot.
 */
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import type { N8n } from './real-n8n';

const OWNER = { email: 'owner@example.sg', firstName: 'Sandbox', lastName: 'Owner', password: 'Sandbox-Owner-2026' };
// n8n's elements carry data-test-id (not playwright's default data-testid)
const testId = (id: string) => `[data-test-id="${id}"]`;

export interface Editor {
  page: Page;
  close(): Promise<void>;
}

/** Launch Chromium, create n8n's owner (first start only) and sign in. */
export async function openEditor(n8n: N8n): Promise<Editor> {
  // playwright gives every launch a fresh temporary profile
  const browser: Browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 860 }, deviceScaleFactor: 1 });
    const setup = await context.request.post(`${n8n.baseUrl}/rest/owner/setup`, { data: OWNER });
    // 400 once an owner exists (a second call on a restarted instance)
    if (!setup.ok() && setup.status() !== 400) throw new Error(`n8n owner setup answered ${setup.status()}: ${await setup.text()}`);
    const login = await context.request.post(`${n8n.baseUrl}/rest/login`, { data: { emailOrLdapLoginId: OWNER.email, password: OWNER.password } });
    if (!login.ok()) throw new Error(`n8n login answered ${login.status()}: ${await login.text()}`);
    const page = await context.newPage();
    return {
      page,
      close: () => browser.close(),
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Open a workflow on the canvas and wait until all its nodes are drawn. */
export async function showWorkflow(n8n: N8n, page: Page, workflowId: string, nodeCount: number): Promise<void> {
  await page.goto(`${n8n.baseUrl}/workflow/${workflowId}`, { timeout: 180_000 });
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length === n, [testId('canvas-node'), nodeCount] as const, { timeout: 180_000 });
  await page.locator(testId('zoom-to-fit')).click();
}

/** The canvas nodes whose type starts with `typePrefix`: name, type and whether their icon image has loaded. */
export async function canvasNodes(page: Page, typePrefix: string): Promise<Array<{ name: string; type: string; icon: string; iconLoaded: boolean }>> {
  const sel = `${testId('canvas-node')}[data-node-type^="${typePrefix}"]`;
  await page.waitForFunction((s) => Array.from(document.querySelectorAll(s)).every((n) => (n.querySelector('img') as HTMLImageElement | null)?.complete), sel, { timeout: 60_000 });
  return page.$$eval(sel, (nodes) => nodes.map((n) => {
    const img = n.querySelector('img');
    return {
      name: n.getAttribute('data-node-name') ?? '',
      type: n.getAttribute('data-node-type') ?? '',
      icon: img?.getAttribute('src') ?? '',
      iconLoaded: !!img && img.complete && img.naturalWidth > 0,
    };
  }));
}

/**
 * Open the node panel ("What happens next?"), search, and list the entries with their icons once the search results
 * show every name in `expected` (the panel first shows its categories, then the results; after 60 s whatever is
 * shown is returned, for the test to report).
 */
export async function searchNodePanel(page: Page, query: string, expected: string[]): Promise<Array<{ name: string; icon: string; iconLoaded: boolean }>> {
  await page.locator(testId('node-creator-plus-button')).click();
  await page.locator(testId('node-creator-search-bar')).fill(query); // the <input> itself
  // nodes with operations are "action" items, the others "node" items; both sit in item-iterator-item wrappers
  const sel = `${testId('node-creator')} ${testId('item-iterator-item')}`;
  const nameSel = testId('node-creator-item-name');
  await page.waitForFunction(([s, n, names]) => {
    const shown = Array.from(document.querySelectorAll(s)).map((i) => i.querySelector(n)?.textContent?.trim());
    return names.every((name) => shown.includes(name));
  }, [sel, nameSel, expected] as const, { timeout: 60_000 }).catch(() => undefined);
  await page.waitForFunction((s) => Array.from(document.querySelectorAll(s)).every((n) => (n.querySelector('img') as HTMLImageElement | null)?.complete ?? true), sel, { timeout: 60_000 });
  return page.$$eval(sel, (items, n) => items.map((item) => {
    const img = item.querySelector('img');
    return {
      name: item.querySelector(n)?.textContent?.trim() ?? '',
      icon: img?.getAttribute('src') ?? '',
      iconLoaded: !!img && img.complete && img.naturalWidth > 0,
    };
  }), nameSel);
}
