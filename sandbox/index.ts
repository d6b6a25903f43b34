import * as fs from 'node:fs';
import * as path from 'node:path';
import { listen, mount, sendBytes, type Handler, type SandboxService } from './http';
import { createPhone, type AutoOptions, type Phone, type PhoneUserKey } from './phone';
import { createCorppassFapiProvider, createCorppassProvider, createSingpassProvider, type ClientRegistration, type CorppassFapiProvider, type CorppassProvider, type SingpassProvider } from './login';
import { createPkiService, createTestPki, derToPem, type PkiService, type TestPki } from './pki';
import { createSignService, signWire, type DsapClient, type SignService } from './sign';

export { createSignService, PhoneFlowError, signWire } from './sign';
export type { SignService, SignServiceOptions, SignFaults, SessionView, DsapClient, DeliveryAttempt, DeliveryFailure } from './sign';
export { createPhone, signDigest, verifyDigest } from './phone';
export type { Phone, PhoneOptions, PhoneUserKey, AutoOptions } from './phone';

const DAY_MS = 86_400_000;

/**
 * Users whose certificate a DSAP must refuse before any hash: `expired`, `notyetvalid` (both from the sandbox CA) and
 * `untrusted` (self-signed). The signing service refuses to deliver them unless `faults.skipUserCertificateChecks`.
 */
async function badUsers(pki: TestPki): Promise<Record<string, PhoneUserKey>> {
  const now = Date.now();
  return {
    expired: await pki.issueUserCertificate({ curve: 'P-256', commonName: 'EXPIRED TEST USER', notBefore: new Date(now - 800 * DAY_MS), notAfter: new Date(now - DAY_MS) }),
    notyetvalid: await pki.issueUserCertificate({ curve: 'P-256', commonName: 'NOT YET VALID TEST USER', notBefore: new Date(now + 30 * DAY_MS), notAfter: new Date(now + 800 * DAY_MS) }),
    untrusted: await pki.issueUserCertificate({ curve: 'P-256', commonName: 'UNTRUSTED TEST USER', selfSigned: true }),
  };
}

/** Options of {@link startSandbox}. */
export interface SandboxOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one — tests must use 0. */
  port?: number;
  /** Persist the PKI (`pki/`), the signing service's keys and registered DSAPs (`sign/`) and `root-ca.pem` here. */
  dir?: string;
  /** Signing session lifetime (default 120 s). */
  sessionTtlSeconds?: number;
  /** Delay between webhook attempts (default 2000 ms; tests use a few ms). */
  webhookRetryDelayMs?: number;
  /** Per-attempt webhook timeout (default 2000 ms). */
  webhookTimeoutMs?: number;
  /** Webhook attempts in all for one notification (default 3), e.g. more to ride out a DSAP outage in a test. */
  webhookAttempts?: number;
  /** Start the phone in automatic mode (scan new sessions, approve submitted hashes). */
  autoPhone?: boolean | AutoOptions;
  /** DSAPs to register with the signing service at start. */
  signClients?: DsapClient[];
  /** Login clients (relying parties) to register at start with all three login providers (Corppass legacy and FAPI 2.0, Singpass). */
  loginClients?: ClientRegistration[];
  /** Create the optional RSA-2048 test user (slower start). Default false. */
  rsaUser?: boolean;
  /**
   * Corppass sends `iss` on login redirects and advertises it in discovery (default false, like the real Corppass
   * today; true rehearses the day it turns `iss` on).
   */
  corppassIssParameter?: boolean;
}

export interface SandboxUrls {
  /** Origin, e.g. `http://127.0.0.1:5156`. */
  base: string;
  /** The `dss_base_url` and the assertion `aud` the sandbox expects: `<origin>/sign`. */
  signBase: string;
  /** Signing API base, `<origin>/sign/api/v1` (paths `/doc-signing-sessions...` follow). */
  signApi: string;
  /** Service key set (`dss_static_url/.well-known/keys.json`). */
  signKeys: string;
  ocsp: string;
  tsa: string;
  rootCert: string;
  intermediateCert: string;
  tsaCert: string;
  /** Phone simulator page. */
  phone: string;
  /** Corppass issuer. */
  corppass: string;
  /** Corppass FAPI 2.0 issuer. */
  corppassFapi: string;
  /** Singpass FAPI issuer. */
  singpass: string;
}

/** A running sandbox: one HTTP server on 127.0.0.1 with every service mounted. */
export interface Sandbox {
  baseUrl: string;
  urls: SandboxUrls;
  /** Path of the root CA certificate (PEM) when `dir` was given. */
  rootCertPath?: string;
  sign: SignService;
  phone: Phone;
  pki: TestPki;
  ca: PkiService;
  corppass: CorppassProvider;
  corppassFapi: CorppassFapiProvider;
  singpass: SingpassProvider;
  /** Login clients registered at start (`loginClients`). */
  loginClientIds: string[];
  close(): Promise<void>;
}

/**
 * Start the whole sandbox: signing service (`/sign`), phone simulator (`/phone`), test CA with OCSP and TSA (`/ca`)
 * and the Corppass (legacy and FAPI 2.0) and Singpass login providers (`/corppass`, `/corppass-fapi`, `/singpass`).
 * Listens first, then creates the services, because AIA URLs and the assertion audience need the real port.
 *
 * @example
 * const sb = await startSandbox({ webhookRetryDelayMs: 10 });
 * sb.sign.registerClient({ clientId: 'my-dsap', jwksUrl, notificationUrl });
 * // ... client calls sb.urls.signApi with aud = sb.urls.signBase ...
 * await sb.close();
 */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  let handler: Handler | undefined;
  const server = await listen(async (req, res, url) => {
    if (!handler) return sendBytes(res, 503, 'sandbox starting', 'text/plain');
    return handler(req, res, url);
  }, opts.port ?? 0);
  const baseUrl = server.baseUrl;
  const closers: (() => Promise<void>)[] = [];
  try {
    const dir = opts.dir ? path.resolve(opts.dir) : undefined;
    const pki = await createTestPki({ baseUrl, dir: dir && path.join(dir, 'pki'), rsaUser: opts.rsaUser ?? false });
    const ca = createPkiService(pki);
    const sign = createSignService({
      baseUrl,
      dir: dir && path.join(dir, 'sign'),
      sessionTtlSeconds: opts.sessionTtlSeconds,
      webhookRetryDelayMs: opts.webhookRetryDelayMs,
      webhookTimeoutMs: opts.webhookTimeoutMs,
      webhookAttempts: opts.webhookAttempts,
      caCertificates: [pki.root.certDer, pki.intermediate.certDer],
    });
    for (const c of opts.signClients ?? []) sign.registerClient(c);
    const users: Record<string, PhoneUserKey> = { p256: pki.users.p256, p384: pki.users.p384, revoked: pki.users.revoked, ...(await badUsers(pki)) };
    if (pki.users.rsa) users.rsa = pki.users.rsa;
    const phone = createPhone({ sign, users });
    if (opts.autoPhone) phone.auto(opts.autoPhone === true ? {} : opts.autoPhone);
    closers.push(async () => phone.close?.(), async () => sign.close?.());

    const corppass = createCorppassProvider({ baseUrl, issParameter: opts.corppassIssParameter });
    const corppassFapi = createCorppassFapiProvider({ baseUrl, issParameter: opts.corppassIssParameter });
    const singpass = createSingpassProvider({ baseUrl });
    for (const c of opts.loginClients ?? []) for (const p of [corppass, corppassFapi, singpass]) p.registerClient(c);
    const services: SandboxService[] = [sign, phone, ca, corppass, corppassFapi, singpass];

    let rootCertPath: string | undefined;
    if (dir) {
      rootCertPath = path.join(dir, 'root-ca.pem');
      fs.writeFileSync(rootCertPath, derToPem(pki.root.certDer, 'CERTIFICATE'));
    }
    const urls: SandboxUrls = {
      base: baseUrl,
      signBase: `${baseUrl}${sign.prefix}`,
      signApi: `${baseUrl}${sign.prefix}${signWire.API_BASE_PATH}`,
      signKeys: `${baseUrl}${sign.prefix}${signWire.KEYS_PATH}`,
      ocsp: `${baseUrl}/ca/ocsp`,
      tsa: `${baseUrl}/ca/tsa`,
      rootCert: `${baseUrl}/ca/root.crt`,
      intermediateCert: `${baseUrl}/ca/intermediate.crt`,
      tsaCert: `${baseUrl}/ca/tsa.crt`,
      phone: `${baseUrl}/phone`,
      corppass: corppass.issuer,
      corppassFapi: corppassFapi.issuer,
      singpass: singpass.issuer,
    };
    const routes = mount(services);
    handler = async (req, res, url) => {
      if (url.pathname === '/' && req.method === 'GET') return sendBytes(res, 200, indexPage(urls), 'text/html; charset=utf-8');
      return routes(req, res, url);
    };
    return {
      baseUrl,
      urls,
      rootCertPath,
      sign,
      phone,
      pki,
      ca,
      corppass,
      corppassFapi,
      singpass,
      loginClientIds: (opts.loginClients ?? []).map((c) => c.clientId),
      async close() {
        await server.close();
        for (const c of closers.reverse()) await c().catch(() => undefined);
      },
    };
  } catch (e) {
    await server.close();
    for (const c of closers.reverse()) await c().catch(() => undefined);
    throw e;
  }
}

function indexPage(urls: SandboxUrls): string {
  const rows = Object.entries(urls)
    .filter(([, v]) => v)
    .map(([k, v]) => `<tr><td>${k}</td><td><a href="${v}">${v}</a></td></tr>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>singpass-flows sandbox</title></head><body style="font-family:sans-serif">
<h1>singpass-flows sandbox</h1><p>Local stand-in for the Singpass signing API, the test CA (OCSP, TSA) and the phone app. TEST ONLY.</p>
<table border="1" cellpadding="6">${rows}</table></body></html>`;
}
