import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { readBody, sendBytes, sendJson, type SandboxService } from '../http';
import { PhoneFlowError, type SessionView, type SignService } from '../sign/service';
import type { DeliveryResult } from '../sign/webhook';
import { NOTIFICATION_ERRORS, signRefFromQrPayload } from '../sign/wire';
import { signDigest } from './digest-signer';

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
}

/** The simulated Singpass app. Every action goes to the signing service in-process, like the real app's backend. */
export interface Phone extends SandboxService {
  /** Scan a session's QR code as `user` → the service sends the certificate notification. */
  scan(signRef: string, opts?: { user?: string }): Promise<DeliveryResult>;
  /** Sign the submitted `doc_hash` (no re-hashing) → the service verifies and sends the signature notification. */
  approve(signRef: string): Promise<DeliveryResult>;
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
 * Phone simulator with HTTP routes (prefix `/phone`): `GET /phone` (HTML page listing sessions with buttons),
 * `POST /phone/scan {sign_ref | qr, user?}`, `POST /phone/approve {sign_ref}`, `POST /phone/reject {sign_ref}`
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
  let autoState: { user: string; delayMs: number } | undefined;

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
    if (autoState) later(() => phone.scan(s.signRef, { user: autoState?.user }));
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
    async approve(signRef) {
      const name = scannedBy.get(signRef);
      if (!name) throw new PhoneFlowError('this phone did not scan that session');
      const s = sign.session(signRef);
      if (!s || !s.docHash) throw new PhoneFlowError('no document hash to sign for that session');
      const signature = signDigest(Buffer.from(s.docHash, 'hex'), userKey(name).privateKey);
      return sign.userSigned(signRef, signature.toString('hex'));
    },
    reject: (signRef) => sign.userFailed(signRef, NOTIFICATION_ERRORS.userCancelled, 'the user declined to sign'),
    error: (signRef, code, description = 'simulated app error') => sign.userFailed(signRef, code, description),
    auto(o) {
      autoState = o === false ? undefined : { user: o.user ?? defaultUser, delayMs: o.delayMs ?? 50 };
      if (autoState) userKey(autoState.user);
    },
    autoErrors: () => [...errors],
    users: () => [...userNames],
    async handle(req, res, url) {
      const sub = url.pathname.slice(prefix.length) || '/';
      if (req.method === 'GET' && sub === '/') return sendBytes(res, 200, page(sign.sessions(), userNames, prefix, url.searchParams.get('msg')), 'text/html; charset=utf-8');
      const action = /^\/(scan|approve|reject)$/.exec(sub)?.[1];
      if (req.method !== 'POST' || !action) return sendJson(res, 404, { error: 'NOT_FOUND', error_description: `no phone route ${url.pathname}` });
      const isForm = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const body = await formOrJson(req);
      const signRef = body.sign_ref || (body.qr ? signRefFromQrPayload(body.qr) : undefined);
      let outcome: string;
      let status = 200;
      try {
        if (!signRef) throw new PhoneFlowError('sign_ref (or qr) is required');
        if (action === 'scan') outcome = await phone.scan(signRef, { user: body.user || undefined });
        else if (action === 'approve') outcome = await phone.approve(signRef);
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

function page(sessions: SessionView[], users: string[], prefix: string, msg: string | null): string {
  const userSelect = `<select name="user">${users.map((u) => `<option>${esc(u)}</option>`).join('')}</select>`;
  const rows = sessions
    .map((s) => {
      const left = Math.max(0, Math.round((s.expiresAt - Date.now()) / 1000));
      const form = (action: string, label: string, extra = ''): string =>
        `<form method="post" action="${prefix}/${action}" style="display:inline"><input type="hidden" name="sign_ref" value="${esc(s.signRef)}">${extra}<button>${label}</button></form>`;
      let actions = '';
      if (s.state === 'created') actions = form('scan', 'Scan QR', userSelect);
      if (s.state === 'hash_submitted') actions = form('approve', 'Approve') + ' ' + form('reject', 'Reject');
      const doc = s.docName
        ? `<div>Document <b>${esc(s.docName)}</b> from <b>${esc(s.domainName ?? '')}</b> — challenge code <b style="font-size:1.4em">${esc(s.challengeCode ?? '')}</b></div>`
        : '';
      return `<tr><td><code>${esc(s.signRef)}</code><br><small>${esc(s.clientId)} / ${esc(s.tenantId)}</small></td><td>${esc(s.state)}</td><td>${left}s</td><td>${doc}${actions}</td></tr>`;
    })
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sandbox phone</title><meta http-equiv="refresh" content="5"></head>
<body style="font-family:sans-serif"><h1>Sandbox Singpass app</h1>${msg ? `<p><i>${esc(msg)}</i></p>` : ''}
<p>Signing sessions waiting for the user. Check that the challenge code matches the one on the document page before approving.</p>
<table border="1" cellpadding="6"><tr><th>sign_ref</th><th>state</th><th>expires in</th><th>action</th></tr>${rows || '<tr><td colspan="4">no sessions</td></tr>'}</table></body></html>`;
}
