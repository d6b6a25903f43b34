import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { readBody, sendBytes, sendJson, type SandboxService } from '../http';
import { PhoneFlowError, type SessionView, type SignService } from '../sign/service';
import type { DeliveryResult } from '../sign/webhook';
import { NOTIFICATION_ERRORS, signRefFromQrPayload } from '../sign/wire';
import { signDigest, type EcdsaEncoding } from './digest-signer';

export { signDigest, verifyDigest } from './digest-signer';

/** A test user of the phone simulator: the signing certificate and its private key (from the sandbox PKI). */
export interface PhoneUserKey {
  certDer: Buffer;
  privateKey: crypto.KeyObject;
}

export interface PhoneOptions {
  sign: SignService;
  /** Test users by name, e.g. `{ p256, p384, revoked }` from the sandbox PKI. */
  users: Record<string, PhoneUserKey>;
  /** User taken when `scan` names none; default `p256` (or the first user). */
  defaultUser?: string;
  prefix?: string;
}

export interface AutoOptions {
  user?: string;
  /** Delay before scanning a new session and before approving a submitted hash (default 50 ms). */
  delayMs?: number;
  /**
   * false: scan no new session by itself, only approve the hashes of the sessions scanned otherwise (`scan`, `POST
   * /phone/scan`), as when a test decides when users scan. Default true. `POST /phone/auto {scan: "on"|"off"}` sets it.
   */
  scan?: boolean;
}

/** The simulated Singpass app. Every action goes to the signing service in-process, like the real app's backend. */
export interface Phone extends SandboxService {
  /** Scan a session's QR code as `user` → the service sends the certificate notification. */
  scan(signRef: string, opts?: { user?: string }): Promise<DeliveryResult>;
  /**
   * Sign the submitted `doc_hash` (no re-hashing) → the service verifies and sends the signature notification.
   * `encoding: 'raw'` answers an EC user's signature as raw r||s instead of DER, as some devices do.
   */
  approve(signRef: string, opts?: { encoding?: EcdsaEncoding }): Promise<DeliveryResult>;
  /** The user declines → error notification `user_cancelled`. */
  reject(signRef: string): Promise<DeliveryResult>;
  /** Any error notification with a chosen code. */
  error(signRef: string, code: string, description?: string): Promise<DeliveryResult>;
  /** Automatic mode: scan every new session and approve every submitted hash (pass `false` to stop). */
  auto(opts: AutoOptions | false): void;
  /** Errors met in automatic mode (e.g. a revoked user's session the DSAP refused), newest last. */
  autoErrors(): string[];
  users(): string[];
}

/**
 * Phone simulator with HTTP routes (prefix `/phone`): `GET /phone` (HTML page listing sessions with buttons; it
 * refreshes itself from `GET /phone/sessions`, the same list as JSON),
 * `POST /phone/scan {sign_ref | qr, user?}`, `POST /phone/approve {sign_ref, encoding?: 'raw'}`, `POST /phone/reject {sign_ref}`,
 * `POST /phone/auto {scan: 'on' | 'off'}` (automatic mode: whether it scans new sessions by itself)
 * (JSON or HTML form bodies; JSON answers `{result}`).
 */
export function createPhone(opts: PhoneOptions): Phone {
  const prefix = opts.prefix ?? '/phone';
  const sign = opts.sign;
  const userNames = Object.keys(opts.users);
  const defaultUser = opts.defaultUser ?? (opts.users.p256 ? 'p256' : userNames[0]);
  const scannedBy = new Map<string, string>();
  const timers = new Set<NodeJS.Timeout>();
  const errors: string[] = [];
  let autoState: { user: string; delayMs: number; scan: boolean } | undefined;

  const userKey = (name: string): PhoneUserKey => {
    const u = opts.users[name];
    if (!u) throw new PhoneFlowError(`unknown test user "${name}" (known: ${userNames.join(', ')})`);
    return u;
  };

  const later = (fn: () => Promise<unknown>): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn().catch((e) => errors.push((e as Error).message));
    }, autoState?.delayMs ?? 0);
    timers.add(t);
  };
  const onCreated = (s: SessionView): void => {
    if (autoState?.scan) later(() => phone.scan(s.signRef, { user: autoState?.user }));
  };
  const onHash = (s: SessionView): void => {
    if (autoState && scannedBy.has(s.signRef)) later(() => phone.approve(s.signRef));
  };
  sign.events.on('created', onCreated);
  sign.events.on('hash', onHash);

  const phone: Phone = {
    prefix,
    async scan(signRef, o = {}) {
      const name = o.user ?? defaultUser;
      const u = userKey(name);
      scannedBy.set(signRef, name);
      return sign.userScanned(signRef, { certDer: u.certDer });
    },
    async approve(signRef, o = {}) {
      const name = scannedBy.get(signRef);
      if (!name) throw new PhoneFlowError('this phone did not scan that session');
      const s = sign.session(signRef);
      if (!s || !s.docHash) throw new PhoneFlowError('no document hash to sign for that session');
      const signature = signDigest(Buffer.from(s.docHash, 'hex'), userKey(name).privateKey, o.encoding);
      return sign.userSigned(signRef, signature.toString('hex'));
    },
    reject: (signRef) => sign.userFailed(signRef, NOTIFICATION_ERRORS.userCancelled, 'the user declined to sign'),
    error: (signRef, code, description = 'simulated app error') => sign.userFailed(signRef, code, description),
    auto(o) {
      autoState = o === false ? undefined : { user: o.user ?? defaultUser, delayMs: o.delayMs ?? 50, scan: o.scan ?? true };
      if (autoState) userKey(autoState.user);
    },
    autoErrors: () => [...errors],
    users: () => [...userNames],
    async handle(req, res, url) {
      const sub = url.pathname.slice(prefix.length) || '/';
      if (req.method === 'GET' && sub === '/') return sendBytes(res, 200, page(sign.sessions(), userNames, prefix, url.searchParams.get('msg')), 'text/html; charset=utf-8');
      if (req.method === 'GET' && sub === '/sessions') return sendJson(res, 200, sessionCards(sign.sessions()));
      const action = /^\/(scan|approve|reject|auto)$/.exec(sub)?.[1];
      if (req.method !== 'POST' || !action) return sendJson(res, 404, { error: 'NOT_FOUND', error_description: `no phone route ${url.pathname}` });
      const isForm = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const body = await formOrJson(req);
      if (action === 'auto') {
        if (!autoState) return sendJson(res, 400, { error: 'PHONE_ERROR', error_description: 'automatic mode is off (start the sandbox with --auto-phone)' });
        if (body.scan !== 'on' && body.scan !== 'off') return sendJson(res, 400, { error: 'PHONE_ERROR', error_description: 'scan: "on" or "off"' });
        autoState.scan = body.scan === 'on';
        return sendJson(res, 200, { result: `automatic scanning ${body.scan}` });
      }
      const signRef = body.sign_ref || (body.qr ? signRefFromQrPayload(body.qr) : undefined);
      let outcome: string;
      let status = 200;
      try {
        if (!signRef) throw new PhoneFlowError('sign_ref (or qr) is required');
        if (action === 'scan') outcome = await phone.scan(signRef, { user: body.user || undefined });
        else if (action === 'approve') outcome = await phone.approve(signRef, { encoding: body.encoding === 'raw' ? 'raw' : undefined });
        else outcome = await phone.reject(signRef);
      } catch (e) {
        if (!(e instanceof PhoneFlowError)) throw e;
        outcome = e.message;
        status = 400;
      }
      if (isForm) {
        res.writeHead(303, { location: `${prefix}?msg=${encodeURIComponent(`${action}: ${outcome}`)}`, 'content-length': '0' });
        return void res.end();
      }
      return sendJson(res, status, status === 200 ? { result: outcome } : { error: 'PHONE_ERROR', error_description: outcome });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      sign.events.off('created', onCreated);
      sign.events.off('hash', onHash);
    },
  };
  return phone;
}


async function formOrJson(req: http.IncomingMessage): Promise<Record<string, string>> {
  const raw = (await readBody(req, 64 * 1024)).toString('utf8');
  if ((req.headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      const o = JSON.parse(raw) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What the phone shows per session (also `GET /phone/sessions` as JSON: the page polls it to refresh itself). */
function sessionCards(sessions: SessionView[]): { sign_ref: string; state: string; expires_at: number; document_name?: string; domain_name?: string; challenge_code?: string }[] {
  return [...sessions]
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((s) => ({ sign_ref: s.signRef, state: s.state, expires_at: s.expiresAt, document_name: s.docName, domain_name: s.domainName, challenge_code: s.challengeCode }));
}

const STATE_TEXT: Record<string, string> = {
  created: 'Waiting for you to scan the QR code',
  cert_sent: 'Scanned — waiting for the document',
  hash_submitted: 'Asks for your signature',
  signed: 'Signed',
  error: 'Ended without a signature',
};

const PAGE_STYLE = `body{font-family:system-ui,sans-serif;background:#e9ecef;margin:0}
.phone{max-width:380px;margin:16px auto;background:#fff;border-radius:28px;border:10px solid #222;min-height:640px;padding:0 0 16px}
.bar{background:#b0163a;color:#fff;padding:14px 18px;border-radius:16px 16px 0 0;font-weight:600}.bar small{display:block;font-weight:400;opacity:.85}
.msg{margin:10px 14px;padding:8px;background:#fff3cd;border-radius:6px;font-size:.9em}
.card{margin:12px 14px;padding:12px;border:1px solid #ddd;border-radius:12px}.card.hash_submitted{border:2px solid #b0163a}
.state{font-size:.85em;color:#555}.doc{font-size:1.1em;margin:8px 0 2px}.domain{color:#333;font-size:.9em}
.code{font-size:2.2em;letter-spacing:.25em;font-weight:700;text-align:center;margin:10px 0;font-family:monospace}
.hint{font-size:.8em;color:#666}.ref{font-size:.7em;color:#888;word-break:break-all}
button{font-size:1em;padding:10px 16px;border-radius:8px;border:0;cursor:pointer;margin:4px 4px 0 0}
.approve{background:#1a7f37;color:#fff}.reject{background:#d0d7de}.scan{background:#0b5cad;color:#fff}
.empty{margin:30px 14px;color:#666;text-align:center}`;

function page(sessions: SessionView[], users: string[], prefix: string, msg: string | null): string {
  const userSelect = `<label class="hint">as test user <select name="user">${users.map((u) => `<option>${esc(u)}</option>`).join('')}</select></label><br>`;
  const cards = sessionCards(sessions)
    .map((s) => {
      const left = Math.max(0, Math.round((s.expires_at - Date.now()) / 1000));
      const form = (action: string, label: string, extra = ''): string =>
        `<form method="post" action="${prefix}/${action}" style="display:inline"><input type="hidden" name="sign_ref" value="${esc(s.sign_ref)}">${extra}<button class="${action}">${label}</button></form>`;
      let body = '';
      if (s.state === 'created') body = form('scan', 'Scan QR code', userSelect);
      if (s.document_name) {
        body += `<div class="doc">Document <b class="doc-name">${esc(s.document_name)}</b></div><div class="domain">from <b class="domain-name">${esc(s.domain_name ?? '')}</b></div>`;
      }
      if (s.state === 'hash_submitted') {
        body += `<div class="code challenge-code">${esc(s.challenge_code ?? '')}</div><div class="hint">Approve only if the signing page shows the same challenge code.</div>`
          + form('approve', 'Approve and sign') + form('reject', 'Reject');
      }
      return `<div class="card ${esc(s.state)}" data-sign-ref="${esc(s.sign_ref)}" data-state="${esc(s.state)}"><div class="state">${esc(STATE_TEXT[s.state] ?? s.state)}${s.state === 'signed' || s.state === 'error' ? '' : ` · expires in ${left}s`}</div>${body}<div class="ref">${esc(s.sign_ref)}</div></div>`;
    })
    .join('');
  const fingerprint = sessionCards(sessions).map((s) => `${s.sign_ref}:${s.state}`).join(',');
  // No meta refresh (it would reload under a click): poll the JSON and reload only when a session changed.
  const script = `<script>var seen=${JSON.stringify(fingerprint)};setInterval(function(){fetch('${prefix}/sessions').then(function(r){return r.json()}).then(function(l){var f=l.map(function(s){return s.sign_ref+':'+s.state}).join(',');if(f!==seen)location.replace('${prefix}')}).catch(function(){})},1000);</script>`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Sandbox Singpass app</title><style>${PAGE_STYLE}</style></head>
<body><div class="phone"><div class="bar">Singpass app <small>sandbox phone simulator · TEST ONLY</small></div>${msg ? `<div class="msg">${esc(msg)}</div>` : ''}
${cards || '<div class="empty">No signing sessions yet. Start one on the signing page.</div>'}</div>${script}</body></html>`;
}
