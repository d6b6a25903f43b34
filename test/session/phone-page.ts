/**
 * What every engine's signer page must do on a phone and on a desktop, checked in a real Chromium: the engines serve
 * the core's page (src/session/signer-page.ts) behind their own routes, so each engine's browser test runs these on
 * a page its own server answered.
 */
import type { Browser, Page } from 'playwright-core';

/** A phone as the issue asks for it: 390 × 844 CSS pixels, touch, a mobile viewport. */
export const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 3 } as const;
export const DESKTOP = { viewport: { width: 1280, height: 800 } } as const;

export interface Box { x: number; y: number; width: number; height: number }

/** The element's box, required to be on screen without scrolling. */
async function onScreen(page: Page, selector: string): Promise<Box> {
  const box = await page.locator(selector).boundingBox();
  expect(box).not.toBeNull();
  const { width, height } = page.viewportSize()!;
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(width);
  expect(box!.y + box!.height).toBeLessThanOrEqual(height);
  return box!;
}

/**
 * On a phone: the "Open in Singpass" link leads (above the QR code), is big enough to tap, on screen without
 * scrolling, and its target is the session's QR payload; the challenge code is on screen too. On a 360 px wide screen
 * nothing scrolls sideways. Returns the link's box (for the report).
 */
export async function expectPhonePage(browser: Browser, pageUrl: string, s: { qrPayload: string; challengeCode: string }): Promise<Box> {
  const context = await browser.newContext(PHONE);
  try {
    const page = await context.newPage();
    await page.goto(pageUrl);
    const link = page.getByRole('link', { name: 'Open in Singpass' });
    await link.waitFor({ state: 'visible' });
    expect(await link.getAttribute('href')).toBe(s.qrPayload);
    const box = await onScreen(page, '#open-app-link');
    expect(box.height).toBeGreaterThanOrEqual(44); // a thumb's target
    expect(box.width).toBeGreaterThanOrEqual(PHONE.viewport.width / 2);
    expect((await page.locator('#code').textContent())!.trim()).toBe(s.challengeCode);
    await onScreen(page, '#code');
    const qr = await page.locator('#qr svg').boundingBox();
    if (qr) expect(qr.y).toBeGreaterThan(box.y); // the QR code, if shown, comes after the link
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await onScreen(page, '#open-app-link');
    return box;
  } finally {
    await context.close();
  }
}

/** On a desktop: the QR code leads, on screen; the "Open in Singpass" link is still there, after it. */
export async function expectDesktopPage(browser: Browser, pageUrl: string, s: { qrPayload: string }): Promise<void> {
  const context = await browser.newContext(DESKTOP);
  try {
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.locator('#qr svg').waitFor({ state: 'visible' });
    const qr = await onScreen(page, '#qr svg');
    const link = page.getByRole('link', { name: 'Open in Singpass' });
    expect(await link.isVisible()).toBe(true);
    expect(await link.getAttribute('href')).toBe(s.qrPayload);
    expect((await link.boundingBox())!.y).toBeGreaterThan(qr.y);
  } finally {
    await context.close();
  }
}

/** Polls the status JSON until the stage is `stage`. */
export async function waitForStage(statusUrl: string, stage: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    const r = await fetch(statusUrl);
    last = r.ok ? ((await r.json()) as { stage: string }).stage : `HTTP ${r.status}`;
    if (last === stage) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the session did not reach "${stage}" within ${timeoutMs} ms (last: ${last})`);
}

/**
 * Back from the Singpass app: the page's timers are frozen (as a browser in the background throttles them), the
 * session moves on meanwhile, and the page catches up the moment it is shown again — on `visibilitychange` (the tab
 * shown again) and on `pageshow` from the back-forward cache — not at its next timer.
 */
export async function expectCatchesUpOnReturn(browser: Browser, pageUrl: string, o: { statusUrl: string; scan(): Promise<unknown>; approve(): Promise<unknown> }): Promise<void> {
  const context = await browser.newContext(PHONE);
  try {
    const page = await context.newPage();
    // the page's clock stands still from before it loads: its timers never fire, only the return from the app can poll
    const now = Date.now();
    await page.clock.install({ time: now });
    await page.clock.pauseAt(now + 1000);
    await page.goto(pageUrl);
    await page.locator('#open-app-link').waitFor({ state: 'visible' });
    await o.scan();
    await waitForStage(o.statusUrl, 'scanned');
    expect(await page.locator('#stage').getAttribute('data-stage')).toBe('waitingForScan');
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 5_000 });
    expect(await page.locator('#open-app').isHidden()).toBe(true);
    expect(await page.locator('#code').isVisible()).toBe(true); // still there to compare with the app
    await o.approve();
    await waitForStage(o.statusUrl, 'signed', 120_000);
    expect(await page.locator('#stage').getAttribute('data-stage')).toBe('scanned');
    await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })));
    await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 5_000 });
    expect(await page.locator('#download-link').isVisible()).toBe(true);
  } finally {
    await context.close();
  }
}
