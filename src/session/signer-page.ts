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

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.3rem}.doc{color:#555}.code{font-size:2rem;letter-spacing:.3rem;font-weight:700}
.stage{padding:.8rem 1rem;border-radius:.5rem;background:#f1f4f8;margin:1rem 0}.failed,.expired{background:#fde8e8}
.signed{background:#e6f6ea}a.button{display:inline-block;padding:.6rem 1rem;background:#c8102e;color:#fff;border-radius:.4rem;text-decoration:none}
ol.steps{padding-left:1.2rem;color:#666}ol.steps li.now{color:#000;font-weight:600}`;

const STEPS: Array<[SignerStatus['stage'], string]> = [['waitingForScan', 'Scan the QR code'], ['scanned', 'Approve in the Singpass app'], ['approved', 'Signature added to the document'], ['signed', 'Signed PDF ready']];

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
  const qr = s.stage === 'waitingForScan' && s.qrPayload ? await renderQr(s.qrPayload, { format: 'svg', width: 280 }) : '';
  const who = [
    s.onBehalfOf ? `for ${s.onBehalfOf.entityName ? `${s.onBehalfOf.entityName} (${s.onBehalfOf.uen})` : s.onBehalfOf.uen} as ${s.onBehalfOf.role}` : '',
    s.signer ? `signer ${s.signer.position} of ${s.signer.of}${s.signer.label ? ` (${s.signer.label})` : ''}` : '',
  ].filter(Boolean).join(' · ');
  const steps = STEPS.map(([stage, label]) => `<li data-stage="${stage}">${esc(label)}</li>`).join('');
  const initial = JSON.stringify({ ...s, qrPayload: undefined, downloadUrl: options.downloadUrl }).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(options.title ?? 'Sign with Singpass')}</title><style>${STYLE}</style></head><body>
<h1>${esc(options.title ?? 'Sign with Singpass')}</h1>
<p class="doc">${esc(s.documentName)}${who ? `<br><span id="who">${esc(who)}</span>` : ''}</p>
<div id="qr">${qr}</div>
<p id="code-line"${s.challengeCode ? '' : ' hidden'}>Challenge code: <span class="code" id="code">${esc(s.challengeCode ?? '')}</span></p>
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
    if (s.stage !== 'waitingForScan') document.getElementById('qr').innerHTML = '';
    if (s.stage !== 'waitingForScan' && s.stage !== 'scanned') document.getElementById('code-line').hidden = true;
    var dl = document.getElementById('download');
    if (s.downloadUrl) { document.getElementById('download-link').href = s.downloadUrl; dl.hidden = false; } else dl.hidden = true;
    var at = order.indexOf(s.stage);
    document.querySelectorAll('ol.steps li').forEach(function (li, i) { li.className = i === at ? 'now' : ''; });
  }
  function poll() {
    fetch(statusUrl, { cache: 'no-store', credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (s) { show(s); if (!s.done) setTimeout(poll, 2000); })
      .catch(function () { setTimeout(poll, 5000); });
  }
  var first = ${initial};
  show(first);
  if (!first.done) setTimeout(poll, 2000);
})();
</script></body></html>`;
}
