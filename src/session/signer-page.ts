import { renderQr } from '../sign/qr';
import { issueSignerLink, type SignerLinkOptions } from './signer-links';
import { signerStatus, type SignerStatus } from './signer-status';
import type { SessionRecord } from './types';

/**
 * The signer's page, the same in every engine: the QR code and challenge code, then the session's progress read from
 * the store every two seconds (so any process or instance can answer), then a download of the signed PDF. The engine
 * only routes: page → {@link renderSignerPage}, status JSON → {@link signerAnswer}, download → the stored signed PDF
 * after `checkSignerLink(purpose 'download')`.
 */

/**
 * Headers of every answer about a signer's session (page, status, download, refusal): the link key is in the address,
 * so no cache keeps it and no Referer leaks it; the page is never framed.
 */
export const SIGNER_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });

/** The HTTP status for a refused signer link: 410 once it expired (it was ours), 403 for anything else. */
export function signerLinkRefusalStatus(code: 'LINK_EXPIRED' | 'LINK_INVALID'): 410 | 403 {
  return code === 'LINK_EXPIRED' ? 410 : 403;
}

export interface SignerAnswer extends SignerStatus {
  /** Signed: a short-lived link to the signed PDF. */
  downloadUrl?: string;
}

/**
 * The status JSON for the page: what the signer may see, plus, once signed, a fresh download link.
 * `downloadUrl(token)` builds the engine's download address from the link token.
 */
export function signerAnswer(record: SessionRecord, options: SignerLinkOptions & { downloadUrl: (token: string) => string; downloadTtlSeconds?: number }): SignerAnswer {
  const status = signerStatus(record);
  if (status.stage !== 'signed') return status;
  const { token } = issueSignerLink({ ...options, signRef: status.signRef, purpose: 'download', ...(options.downloadTtlSeconds ? { ttlSeconds: options.downloadTtlSeconds } : {}) });
  return { ...status, downloadUrl: options.downloadUrl(token) };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;overflow-wrap:anywhere}
h1{font-size:1.3rem}.doc{color:#555}.code{font-size:2rem;letter-spacing:.3rem;font-weight:700}
.stage{padding:.8rem 1rem;border-radius:.5rem;background:#f1f4f8;margin:1rem 0}.failed,.expired{background:#fde8e8}
.signed{background:#e6f6ea}a.button{display:inline-block;padding:.6rem 1rem;background:#c8102e;color:#fff;border-radius:.4rem;text-decoration:none}
ol.steps{padding-left:1.2rem;color:#666}ol.steps li.now{color:#000;font-weight:600}`;

/**
 * The start of the signer's page: on a desktop the QR code leads (scanned with the phone) and the app link follows;
 * on a phone (coarse pointer, or a narrow screen) the big "Open in Singpass" link leads, since nobody can scan their
 * own screen, and the QR code follows, smaller. The challenge code sits right after, visible in both.
 */
const START_STYLE = `.start{display:flex;flex-direction:column}#qr{order:1}#qr svg{max-width:100%;height:auto}#open-app{order:2}#code-line{order:3}
#open-app a{display:inline-block;margin:.5rem 0;padding:.5rem .9rem;border:2px solid #c8102e;border-radius:.4rem;color:#c8102e;font-weight:600;text-decoration:none}
@media (pointer:coarse),(max-width:40rem){body{margin:1rem auto}#open-app{order:1}#code-line{order:2}#qr{order:3}#qr svg{width:12rem}
#open-app a{display:block;box-sizing:border-box;width:100%;padding:1.1rem 1rem;background:#c8102e;color:#fff;border:0;font-size:1.25rem;text-align:center}
#open-app .hint{display:none}}`;

/**
 * The QR payload is the Singpass app link (wire-names.md); it becomes a link's target only when it is a URL whose
 * scheme opens an app or a page, never one that runs script in ours.
 */
export function appLinkTarget(payload: string | undefined): string | undefined {
  if (!payload) return undefined;
  let url: URL;
  try {
    url = new URL(payload);
  } catch {
    return undefined;
  }
  return ['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'http:'].includes(url.protocol) ? undefined : payload;
}

const STEPS: Array<[SignerStatus['stage'], string]> = [['waitingForScan', 'Scan the QR code (or open Singpass)'], ['scanned', 'Approve in the Singpass app'], ['approved', 'Signature added to the document'], ['signed', 'Signed PDF ready']];

/** A page with one message: a refusal (no role, an expired link) or an error, in the same look as the signer's page. */
export function renderNoticePage(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><h1>${esc(title)}</h1><p class="stage failed" id="notice">${esc(message)}</p></body></html>`;
}

/**
 * The signer's page for a session. `statusUrl`: where the page polls {@link signerAnswer} (the page link's token
 * included). `downloadUrl`: when already signed. The QR code is drawn here from the stored payload.
 */
export async function renderSignerPage(options: { status: SignerStatus; statusUrl: string; downloadUrl?: string; title?: string }): Promise<string> {
  const s = options.status;
  const waiting = s.stage === 'waitingForScan';
  const qr = waiting && s.qrPayload ? await renderQr(s.qrPayload, { format: 'svg', width: 280 }) : '';
  const appLink = waiting ? appLinkTarget(s.qrPayload) : undefined;
  const who = [
    s.onBehalfOf ? `for ${s.onBehalfOf.entityName ? `${s.onBehalfOf.entityName} (${s.onBehalfOf.uen})` : s.onBehalfOf.uen} as ${s.onBehalfOf.role}` : '',
    s.signer ? `signer ${s.signer.position} of ${s.signer.of}${s.signer.label ? ` (${s.signer.label})` : ''}` : '',
  ].filter(Boolean).join(' · ');
  const steps = STEPS.map(([stage, label]) => `<li data-stage="${stage}">${esc(label)}</li>`).join('');
  const initial = JSON.stringify({ ...s, qrPayload: undefined, downloadUrl: options.downloadUrl }).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(options.title ?? 'Sign with Singpass')}</title><style>${STYLE}
${START_STYLE}</style></head><body>
<h1>${esc(options.title ?? 'Sign with Singpass')}</h1>
<p class="doc">${esc(s.documentName)}${who ? `<br><span id="who">${esc(who)}</span>` : ''}</p>
<div class="start"><div id="qr">${qr}</div>
<p id="open-app"${appLink ? '' : ' hidden'}><span class="hint">Singpass on this device? </span><a id="open-app-link" href="${esc(appLink ?? '#')}">Open in Singpass</a></p>
<p id="code-line"${s.challengeCode ? '' : ' hidden'}>Challenge code: <span class="code" id="code">${esc(s.challengeCode ?? '')}</span></p></div>
<div class="stage ${esc(s.stage)}" id="stage" data-stage="${esc(s.stage)}"><strong id="headline">${esc(s.headline)}</strong><p id="detail">${esc(s.detail ?? '')}</p>
<p id="download"${options.downloadUrl ? '' : ' hidden'}><a class="button" id="download-link" href="${esc(options.downloadUrl ?? '#')}">Download the signed PDF</a></p></div>
<ol class="steps">${steps}</ol>
<script>
(function () {
  var statusUrl = ${JSON.stringify(options.statusUrl).replace(/</g, '\\u003c')};
  var order = ['waitingForScan', 'scanned', 'approved', 'signed'];
  function show(s) {
    var box = document.getElementById('stage');
    box.className = 'stage ' + s.stage; box.setAttribute('data-stage', s.stage);
    document.getElementById('headline').textContent = s.headline;
    document.getElementById('detail').textContent = s.detail || '';
    if (s.stage !== 'waitingForScan') { document.getElementById('qr').innerHTML = ''; document.getElementById('open-app').hidden = true; }
    if (s.stage !== 'waitingForScan' && s.stage !== 'scanned') document.getElementById('code-line').hidden = true;
    var dl = document.getElementById('download');
    if (s.downloadUrl) { document.getElementById('download-link').href = s.downloadUrl; dl.hidden = false; } else dl.hidden = true;
    var at = order.indexOf(s.stage);
    document.querySelectorAll('ol.steps li').forEach(function (li, i) { li.className = i === at ? 'now' : ''; });
  }
  // One poll at a time: a timer, or a request in flight. Coming back from the Singpass app (the tab shown again, or
  // the page restored from the back-forward cache) polls at once, so the page never shows a stale stage.
  var timer = null, busy = false, done = false;
  function later(ms) { if (!done) timer = setTimeout(poll, ms); }
  function poll() {
    clearTimeout(timer); timer = null;
    if (busy || done) return;
    busy = true;
    fetch(statusUrl, { cache: 'no-store', credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (s) { busy = false; show(s); done = !!s.done; later(2000); })
      .catch(function () { busy = false; later(5000); });
  }
  document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'visible') poll(); });
  window.addEventListener('pageshow', function (e) { if (e.persisted) poll(); });
  var first = ${initial};
  show(first);
  done = !!first.done;
  later(2000);
})();
</script></body></html>`;
}
