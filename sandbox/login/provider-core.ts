/**
 * What Corppass and Singpass providers share: client registry (RP key sets fetched on every use, like the real
 * services after their cache expires), client-assertion checks, provider signing keys and the key-set endpoint,
 * token building (sign, then encrypt to the RP) with the misbehaviour switches, authorization responses, and the
 * request log.
 */
import * as crypto from 'node:crypto';
import { promisify } from 'node:util';
import type * as http from 'node:http';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { readBody, sendBytes, sendJson } from '../http';
import { issueCertificate, randomSerial } from '../pki/x509';
import type { ClaimOverrides, IssuerVariant, JoseMisbehaviour, LoginEndpoint, Misbehaviour, OAuthErrorResponse } from './misbehaviour';
import type { ClientRegistration, DecodedJwt, LoginProvider, ProviderOptions, RecordedRequest } from './types';
import {
  attackerKey,
  b64u,
  decodeCompact,
  encryptForRp,
  isObject,
  newEcSigningKey,
  privateJwk,
  signCompact,
  tamperJwe,
  unb64u,
  verifyEcCompact,
  type ContentEnc,
  type ForgeAlg,
  type JsonObject,
  type SigKey,
} from './jose-forge';

const generateKeyPair = promisify(crypto.generateKeyPair);

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Client assertions may live at most this long (Singpass: ≤ 120 s), plus this much clock skew. */
const ASSERTION_MAX_LIFETIME_S = 120;
const SKEW_S = 10;

/** A failed check, turned into an OAuth error response by the endpoint. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(description);
  }
}

/** Claim override map → claims (see misbehaviour.ts module doc for `null` and `$…` values). */
export function applyOverrides(claims: JsonObject, overrides: ClaimOverrides | undefined, ctx: { nowS: number; clientId: string }): JsonObject {
  if (!overrides) return claims;
  const out: JsonObject = { ...claims };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) {
      delete out[k];
      continue;
    }
    if (isObject(v) && typeof v.$secondsFromNow === 'number') out[k] = ctx.nowS + v.$secondsFromNow;
    else if (isObject(v) && Array.isArray(v.$clientIdPlus)) out[k] = [ctx.clientId, ...(v.$clientIdPlus as unknown[])];
    else if (isObject(v) && '$literal' in v) out[k] = v.$literal;
    else out[k] = v;
  }
  return out;
}

/** Distort an issuer string as {@link IssuerVariant} documents. `undefined` = leave it out. */
export function distortIssuer(iss: string, variant: IssuerVariant | undefined, otherIssuer: string): string | undefined {
  if (!variant || variant === 'doubleEncoded') return iss;
  const u = new URL(iss);
  const origin = `${u.protocol}//${u.host}`;
  switch (variant) {
    case 'wrong':
      return iss + '1';
    case 'missing':
      return undefined;
    case 'trailingSlash':
      return iss + '/';
    case 'upperHost':
      return origin.toUpperCase() + iss.slice(origin.length);
    case 'port443':
      if (!u.port) return `${u.protocol}//${u.hostname}:${u.protocol === 'https:' ? 443 : 80}` + iss.slice(origin.length);
      return `${u.protocol}//${u.hostname}:0${u.port}` + iss.slice(origin.length);
    case 'http':
      return (u.protocol === 'https:' ? 'http:' : 'https:') + iss.slice(u.protocol.length);
    case 'extraPath':
      return iss + '/x';
    case 'otherProvider':
      return otherIssuer;
  }
}

/** PKCE S256: base64url(SHA-256(verifier)) — compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const a = crypto.createHash('sha256').update(verifier).digest();
  const b = Buffer.from(challenge, 'base64url');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

function decodeJwt(compact: string): DecodedJwt | undefined {
  const d = decodeCompact(compact);
  return d ? { ...d, compact } : undefined;
}

interface AuxKeys {
  rsa?: { kid: string; privateKey: crypto.KeyObject; publicJwk: JWK };
  decoys?: JWK[];
  extra: SigKey[];
}

/** Base class of both providers. */
export abstract class ProviderCore implements LoginProvider {
  readonly prefix: string;
  readonly issuer: string;
  protected readonly baseUrl: string;
  protected readonly clock: () => number;
  protected m: Misbehaviour = {};
  protected readonly clients = new Map<string, ClientRegistration>();
  private log: RecordedRequest[] = [];
  private seq = 0;
  private published: SigKey[];
  private current: SigKey;
  private readonly aux: AuxKeys = { extra: [] };
  private readonly seenAssertionJti = new Map<string, number>();
  private readonly certs = new Map<string, Buffer>();
  /** Corppass publishes `x5c`/`x5t`/`x5t#S256` with its keys (spec §2.3); Singpass does not. */
  protected publishCertificates = false;
  /** RFC 9207 `iss` sent on redirects and advertised in discovery (see {@link ProviderOptions.issParameter}). */
  readonly issParameter: boolean;

  protected constructor(opts: ProviderOptions, defaultPrefix: string, issuerPath: string, defaultIssParameter: boolean) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.issParameter = opts.issParameter ?? defaultIssParameter;
    this.prefix = opts.prefix ?? defaultPrefix;
    this.issuer = `${this.baseUrl}${this.prefix}${issuerPath}`;
    this.clock = opts.clock ?? Date.now;
    this.current = newEcSigningKey();
    this.published = [this.current];
  }

  /** The issuer of the other sandbox provider (for the mix-up switch). */
  protected abstract otherIssuer(): string;
  /** Token endpoint URL (the `htu` of the DPoP-proof-shaped substitute). */
  abstract get tokenEndpoint(): string;
  /** Route a request under the prefix; set `rec.endpoint`. */
  protected abstract route(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void>;

  // ---- control surface ------------------------------------------------------------------------------------------
  registerClient(client: ClientRegistration): void {
    if (!client.clientId || !client.jwksUrl || !client.redirectUris?.length) throw new Error('registerClient needs clientId, jwksUrl and redirectUris');
    this.clients.set(client.clientId, { ...client, redirectUris: [...client.redirectUris] });
  }
  misbehave(m: Misbehaviour): void {
    this.m = { ...this.m, ...m };
  }
  reset(): void {
    this.m = {};
  }
  async rotateKeys(): Promise<void> {
    this.current = newEcSigningKey();
    this.published.push(this.current);
  }
  retireOldKeys(): void {
    this.published = [this.current];
  }
  currentKid(): string {
    return this.current.kid;
  }
  requests(): RecordedRequest[] {
    return this.log.map((r) => ({ ...r }));
  }
  clearRequests(): void {
    this.log = [];
  }

  protected now(): number {
    return this.clock();
  }
  protected nowS(): number {
    return Math.floor(this.clock() / 1000);
  }
  protected get sandboxUrl(): string {
    return `${this.baseUrl}${this.prefix}/sandbox`;
  }

  // ---- request handling -----------------------------------------------------------------------------------------
  handle = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> => {
    const rec: RecordedRequest = {
      seq: ++this.seq,
      at: this.now(),
      endpoint: 'unknown',
      method: req.method ?? 'GET',
      url: url.pathname + url.search,
      headers: { ...req.headers },
    };
    this.log.push(rec);
    const rest = url.pathname.slice(this.prefix.length);
    if (rest === '/sandbox/redirect-sink') {
      rec.endpoint = 'redirectSink';
      return this.json(res, rec, 200, { sandbox: 'redirect sink: a client followed a back-channel redirect' });
    }
    if (rest === '/sandbox/attacker-jwks') {
      rec.endpoint = 'attackerJwks';
      return this.raw(res, rec, 200, JSON.stringify({ keys: [{ ...attackerKey().publicJwk, kid: this.current.kid, use: 'sig', alg: 'ES256' }] }), 'application/jwk-set+json');
    }
    if (rest === '/sandbox/attacker-cert') {
      rec.endpoint = 'attackerJwks';
      const pem = `-----BEGIN CERTIFICATE-----\n${attackerKey().certB64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
      return this.raw(res, rec, 200, pem, 'application/pem-certificate-chain');
    }
    try {
      await this.route(req, res, url, rec);
    } catch (err) {
      if (err instanceof Refusal) return this.oauthError(res, rec, err);
      throw err;
    }
  };

  /** Read and record a form body (duplicates preserved), decoding client assertion / DPoP for the log. */
  protected async readForm(req: http.IncomingMessage, rec: RecordedRequest): Promise<URLSearchParams> {
    const ct = String(req.headers['content-type'] ?? '');
    const body = await readBody(req, 1024 * 1024);
    const form = new URLSearchParams(body.toString('utf8'));
    rec.form = [...form.entries()];
    const ca = form.get('client_assertion');
    if (ca) rec.clientAssertion = decodeJwt(ca);
    if (!ct.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      throw new Refusal(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    return form;
  }

  /** Single-valued form parameter; a repeated parameter is an error (RFC 6749 §3.1). */
  protected param(form: URLSearchParams, name: string, required = false): string | undefined {
    const all = form.getAll(name);
    if (all.length > 1) throw new Refusal(400, 'invalid_request', `parameter ${name} must not be repeated`);
    const v = all[0];
    if (required && (v === undefined || v === '')) throw new Refusal(400, 'invalid_request', `missing parameter ${name}`);
    return v === '' ? undefined : v;
  }

  // ---- responses ------------------------------------------------------------------------------------------------
  protected json(res: http.ServerResponse, rec: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): void {
    rec.status = status;
    sendJson(res, status, body, { 'cache-control': 'no-store', ...headers });
  }
  protected raw(res: http.ServerResponse, rec: RecordedRequest, status: number, body: string | Buffer, contentType: string, headers: Record<string, string> = {}): void {
    rec.status = status;
    sendBytes(res, status, body, contentType, { 'cache-control': 'no-store', ...headers });
  }
  protected oauthError(res: http.ServerResponse, rec: RecordedRequest, r: Refusal): void {
    rec.status = r.status;
    rec.error = r.error;
    rec.reason = r.description;
    const data = Buffer.from(JSON.stringify({ error: r.error, error_description: r.description }));
    res.writeHead(r.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(data.length), 'cache-control': 'no-store', ...r.headers });
    res.end(data);
  }
  /** Send a body override (misbehaviour `parBody` / `tokenBody`). */
  protected sendOverride(res: http.ServerResponse, rec: RecordedRequest, status: number, o: { json: unknown; contentType?: string } | { raw: string; contentType?: string }): void {
    if ('raw' in o) return this.raw(res, rec, status, o.raw, o.contentType ?? 'text/plain');
    return this.raw(res, rec, status, JSON.stringify(o.json), o.contentType ?? 'application/json; charset=utf-8');
  }
  /** [28] answer with a redirect to the sink if the switch targets this endpoint. */
  protected redirectedAway(endpoint: NonNullable<Misbehaviour['redirectBackChannel']>, res: http.ServerResponse, rec: RecordedRequest): boolean {
    if (this.m.redirectBackChannel !== endpoint) return false;
    rec.status = 307;
    res.writeHead(307, { location: `${this.sandboxUrl}/redirect-sink`, 'content-length': '0' });
    res.end();
    return true;
  }
  /** Apply a metadata override map (`null` removes). */
  protected finishDiscovery(meta: JsonObject, endpointKeys: Record<string, string>): JsonObject {
    const m = this.m;
    let out: JsonObject = { ...meta, authorization_response_iss_parameter_supported: this.issParameter };
    if (m.discoveryIssuer) {
      const v = distortIssuer(this.issuer, m.discoveryIssuer, this.otherIssuer());
      if (v === undefined) delete out.issuer;
      else out.issuer = v;
    }
    if (m.discoveryNoIssParam === 'false') out.authorization_response_iss_parameter_supported = false;
    if (m.discoveryNoIssParam === 'missing') delete out.authorization_response_iss_parameter_supported;
    if (m.discoveryNoS256) out.code_challenge_methods_supported = ['plain'];
    if (m.discoveryInsecureEndpoint) {
      const key = endpointKeys[m.discoveryInsecureEndpoint];
      if (key && typeof out[key] === 'string') out[key] = String(out[key]).replace(/^https?:\/\/[^/]+/, 'http://insecure.sandbox.invalid');
    }
    out = applyOverrides(out, m.discoveryOverride, { nowS: this.nowS(), clientId: '' });
    return out;
  }

  // ---- clients ----------------------------------------------------------------------------------------------------
  protected client(clientId: string | undefined): ClientRegistration {
    const c = clientId ? this.clients.get(clientId) : undefined;
    if (!c) throw new Refusal(401, 'invalid_client', 'unknown client_id (register it with registerClient)');
    return c;
  }

  /** Fetch the RP key set (no cache: the sandbox always sees the RP's current keys). */
  protected async rpKeys(client: ClientRegistration): Promise<JWK[]> {
    let resp: Response;
    try {
      resp = await fetch(client.jwksUrl, { redirect: 'manual', signal: AbortSignal.timeout(5000) });
    } catch (e) {
      throw new Refusal(401, 'invalid_client', `could not fetch the client key set: ${(e as Error).message}`);
    }
    const body = (await resp.json().catch(() => undefined)) as unknown;
    if (!resp.ok || !isObject(body) || !Array.isArray(body.keys)) throw new Refusal(401, 'invalid_client', `client key set at ${client.jwksUrl} is unusable (HTTP ${resp.status})`);
    return (body.keys as unknown[]).filter(isObject);
  }

  /** The RP encryption key: `use: enc` EC key (by kid if asked), first listed otherwise. */
  protected async rpEncKey(client: ClientRegistration, kid?: string): Promise<JWK> {
    const keys = (await this.rpKeys(client)).filter((k) => k.use === 'enc' && k.kty === 'EC');
    const key = kid ? keys.find((k) => k.kid === kid) : keys[0];
    if (!key) throw new Refusal(400, 'invalid_client', kid ? `no encryption key with kid ${kid} in the client key set` : 'the client key set has no EC key with use "enc"');
    return key;
  }

  /**
   * private_key_jwt (RFC 7523 + FAPI 2.0): typ JWT, ES256/384/512, kid of a `use: sig` RP key, iss = sub =
   * client_id, aud = issuer AS A STRING, exp ≤ 120 s ahead, iat not in the future, jti never seen before.
   */
  protected async authenticateClient(form: URLSearchParams): Promise<ClientRegistration> {
    const bad = (why: string) => new Refusal(401, 'invalid_client', `client assertion rejected: ${why}`);
    if (this.param(form, 'client_assertion_type') !== CLIENT_ASSERTION_TYPE) throw bad(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
    const assertion = this.param(form, 'client_assertion');
    if (!assertion) throw bad('missing client_assertion');
    const decoded = decodeCompact(assertion);
    if (!decoded) throw bad('not a compact JWS');
    const { header, payload } = decoded;
    const clientId = this.param(form, 'client_id') ?? (typeof payload.iss === 'string' ? payload.iss : undefined);
    const client = this.client(clientId);
    if (header.typ !== 'JWT') throw bad('header typ must be "JWT"');
    if (!['ES256', 'ES384', 'ES512'].includes(String(header.alg))) throw bad('alg must be ES256, ES384 or ES512');
    if (typeof header.kid !== 'string') throw bad('header kid is required');
    if (header.jwk || header.jku || header.x5c || header.x5u) throw bad('keys in the header are not accepted');
    const key = (await this.rpKeys(client)).find((k) => k.kid === header.kid && (k.use === undefined || k.use === 'sig'));
    if (!key) throw bad(`kid ${String(header.kid)} is not a signing key in the client key set`);
    if (!verifyEcCompact(assertion, key)) throw bad('signature does not verify with the registered key');
    if (payload.iss !== client.clientId || payload.sub !== client.clientId) throw bad('iss and sub must both equal client_id');
    if (typeof payload.aud !== 'string') throw bad('aud must be the issuer as a single string (not an array)');
    if (payload.aud !== this.issuer) throw bad(`aud must be the issuer ${this.issuer} (not the endpoint URL)`);
    const now = this.nowS();
    if (typeof payload.exp !== 'number') throw bad('exp is required');
    if (payload.exp <= now - SKEW_S) throw bad('expired');
    if (payload.exp > now + ASSERTION_MAX_LIFETIME_S + SKEW_S) throw bad(`exp must be at most ${ASSERTION_MAX_LIFETIME_S} s ahead`);
    if (typeof payload.iat !== 'number' || payload.iat > now + SKEW_S) throw bad('iat is required and must not be in the future');
    if (typeof payload.jti !== 'string' || payload.jti.length < 8) throw bad('jti is required (unique per assertion)');
    for (const [j, exp] of this.seenAssertionJti) if (exp < now - 600) this.seenAssertionJti.delete(j);
    if (this.seenAssertionJti.has(payload.jti)) throw bad('jti was already used (replay)');
    this.seenAssertionJti.set(payload.jti, payload.exp);
    return client;
  }

  protected redirectUriAllowed(client: ClientRegistration, uri: string | undefined): uri is string {
    return !!uri && client.redirectUris.includes(uri);
  }

  // ---- grants -----------------------------------------------------------------------------------------------------
  /** Drop entries that expired over a minute ago, so a long-running sandbox does not grow. */
  protected purgeExpired(...maps: Array<Map<string, { expiresAt: number }>>): void {
    const now = this.now();
    for (const map of maps) for (const [k, v] of map) if (v.expiresAt <= now - 60_000) map.delete(k);
  }

  /** Throw the OAuth error a `parError` / `tokenError` switch asks for (401 for `invalid_client` unless a status is set). */
  protected refuseAsConfigured(e: OAuthErrorResponse | undefined): void {
    if (e) throw new Refusal(e.status ?? (e.error === 'invalid_client' ? 401 : 400), e.error, e.error_description ?? `sandbox: ${e.error}`);
  }

  /**
   * Redeem the authorization code of a token request: known and issued to this client, single use (spent whatever
   * happens next), unexpired, same redirect_uri as `requestName`, PKCE verifier matching.
   */
  protected redeemCode<G extends { clientId: string; redirectUri: string; codeChallenge: string; expiresAt: number; used: boolean }>(
    codes: Map<string, G>, form: URLSearchParams, client: ClientRegistration, ttlS: number, requestName: string,
  ): G {
    const grant = codes.get(this.param(form, 'code', true)!);
    if (!grant || grant.clientId !== client.clientId) throw new Refusal(400, 'invalid_grant', 'unknown authorization code');
    if (grant.used) throw new Refusal(400, 'invalid_grant', 'authorization code was already used');
    grant.used = true; // single use, whatever happens next
    if (grant.expiresAt <= this.now()) throw new Refusal(400, 'invalid_grant', `authorization code expired (lifetime ${ttlS} s)`);
    if (this.param(form, 'redirect_uri') !== grant.redirectUri) throw new Refusal(400, 'invalid_grant', `redirect_uri does not match the ${requestName}`);
    const verifier = this.param(form, 'code_verifier');
    if (!verifier || !pkceMatches(verifier, grant.codeChallenge)) throw new Refusal(400, 'invalid_grant', 'PKCE code_verifier does not match the code_challenge');
    return grant;
  }

  // ---- provider keys ----------------------------------------------------------------------------------------------
  private usesRs256(): boolean {
    const m = this.m;
    return [m.idTokenJose, m.userinfoJose, m.authInfoJose].some((j) => j?.innerAlg === 'RS256');
  }
  private async rsaAlt(): Promise<NonNullable<AuxKeys['rsa']>> {
    if (!this.aux.rsa) {
      const { privateKey, publicKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
      this.aux.rsa = { kid: 'rsa-alt', privateKey, publicJwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'rsa-alt', use: 'sig', alg: 'RS256' } };
    }
    return this.aux.rsa;
  }
  private async decoys(): Promise<JWK[]> {
    if (!this.aux.decoys) {
      const ed = await generateKeyPair('ed25519');
      const rsa = await generateKeyPair('rsa', { modulusLength: 2048 });
      const p384 = await generateKeyPair('ec', { namedCurve: 'P-384' });
      this.aux.decoys = [
        { ...(ed.publicKey.export({ format: 'jwk' }) as JWK), alg: 'EdDSA' },
        { ...(rsa.publicKey.export({ format: 'jwk' }) as JWK), alg: 'PS256' },
        { ...(p384.publicKey.export({ format: 'jwk' }) as JWK), alg: 'ES384' },
      ];
    }
    return this.aux.decoys.map((k) => ({ ...k, kid: this.current.kid, use: 'sig' }));
  }

  /** The key set as currently published (switches applied). */
  protected async publishedKeys(): Promise<JWK[]> {
    const m = this.m;
    const keys: JWK[] = [];
    if (m.decoyKeys) keys.push(...(await this.decoys()));
    for (const k of this.published) {
      let jwk: JWK = m.jwks === 'privateKey' ? privateJwk(k) : { ...k.publicJwk };
      if (k === this.current && m.jwksSigKeyUse === 'enc') jwk = { ...jwk, use: 'enc' };
      if (k === this.current && m.jwksSigKeyUse === 'keyOpsNoVerify') {
        const { use: _u, ...rest } = jwk;
        jwk = { ...rest, key_ops: ['deriveBits'] };
      }
      if (this.publishCertificates) jwk = { ...jwk, ...(await this.certificateMembers(k)) };
      keys.push(jwk);
    }
    while (this.aux.extra.length < (m.extraSigKeys ?? 0)) this.aux.extra.push(newEcSigningKey());
    for (const k of this.aux.extra.slice(0, m.extraSigKeys ?? 0)) keys.push({ ...k.publicJwk });
    if (this.usesRs256()) keys.push((await this.rsaAlt()).publicJwk);
    return keys;
  }

  /** A self-signed certificate for a provider key, as `x5c`/`x5t`/`x5t#S256` members (cached per kid). */
  private async certificateMembers(k: SigKey): Promise<Record<string, unknown>> {
    let der = this.certs.get(k.kid);
    if (!der) {
      const now = this.now();
      der = await issueCertificate({
        subject: { C: 'SG', O: 'Sandbox (TEST ONLY)', CN: `Corppass sandbox signing key ${k.kid}` },
        serial: randomSerial(),
        publicKey: k.publicKey,
        notBefore: new Date(Math.floor(now / 1000) * 1000 - 86_400_000),
        notAfter: new Date(Math.floor(now / 1000) * 1000 + 2 * 365 * 86_400_000),
        issuerKey: k.privateKey,
        keyUsage: ['digitalSignature'],
      });
      this.certs.set(k.kid, der);
    }
    return {
      x5c: [der.toString('base64')],
      x5t: crypto.createHash('sha1').update(der).digest('base64url'),
      'x5t#S256': crypto.createHash('sha256').update(der).digest('base64url'),
    };
  }

  protected async serveJwks(res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'jwks';
    if (this.redirectedAway('jwks', res, rec)) return;
    const m = this.m;
    if (m.jwksDelayMs) await new Promise((r) => setTimeout(r, m.jwksDelayMs));
    const ct = 'application/jwk-set+json; charset=utf-8';
    switch (m.jwks) {
      case 'status500':
        return this.json(res, rec, 500, { error: 'server_error' });
      case 'status404':
        return this.json(res, rec, 404, { error: 'not_found' });
      case 'notJson':
        return this.raw(res, rec, 200, '<html><body>keys</body></html>', ct);
      case 'noKeys':
        return this.raw(res, rec, 200, '{}', ct);
      case 'keysNotArray':
        return this.raw(res, rec, 200, '{"keys":{}}', ct);
      case 'empty':
        return this.raw(res, rec, 200, '{"keys":[]}', ct);
    }
    const body = JSON.stringify({ keys: await this.publishedKeys() });
    return this.raw(res, rec, 200, body, m.jwks === 'htmlContentType' ? 'text/html' : ct, { 'cache-control': 'public, max-age=3600' });
  }

  // ---- tokens -----------------------------------------------------------------------------------------------------
  /** Rotate now if the "just before signing" switch is armed (then disarm it). [70] */
  protected async maybeRotateBeforeIdToken(): Promise<void> {
    if (this.m.rotateKeysBeforeNextIdToken) {
      this.m = { ...this.m, rotateKeysBeforeNextIdToken: false };
      await this.rotateKeys();
    }
  }

  /** An honestly signed JWS (ES256, current key) — access tokens, authorization info without switches. */
  protected sign(claims: JsonObject, typ = 'JWT'): string {
    return signCompact({ alg: 'ES256', typ, kid: this.current.kid }, Buffer.from(JSON.stringify(claims)), 'ES256', this.current.privateKey);
  }

  /** A JWS with the given JOSE misbehaviour applied (inner-signature switches only). */
  protected async signWith(claims: JsonObject, jm: JoseMisbehaviour | undefined, typ = 'JWT'): Promise<string> {
    const j = jm ?? {};
    let json = JSON.stringify(claims);
    if (j.duplicateClaim) {
      const v = claims[j.duplicateClaim];
      const dup = typeof v === 'string' ? `${v}-duplicate` : 'duplicate';
      json = json.slice(0, -1) + (json.length > 2 ? ',' : '') + `${JSON.stringify(j.duplicateClaim)}:${JSON.stringify(dup)}}`;
    }
    let payload = Buffer.from(json);
    if (j.nonUtf8) {
      const marker = '__SANDBOX_NON_UTF8__';
      const withMarker = Buffer.from(json.slice(0, -1) + `,"x_sandbox":"${marker}"}`);
      const at = withMarker.indexOf(marker);
      payload = Buffer.concat([withMarker.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff]), withMarker.subarray(at + marker.length)]);
    }
    const header: JsonObject = { alg: 'ES256', typ, kid: this.current.kid, ...(j.header ?? {}) };
    let alg: ForgeAlg = 'ES256';
    let key: crypto.KeyObject | undefined = this.current.privateKey;
    let secret: Buffer | undefined;
    switch (j.innerAlg) {
      case 'none':
        alg = 'none';
        header.alg = 'none';
        key = undefined;
        break;
      case 'RS256': {
        const rsa = await this.rsaAlt();
        alg = 'RS256';
        header.alg = 'RS256';
        header.kid = rsa.kid;
        key = rsa.privateKey;
        break;
      }
      case 'HS256':
        alg = 'HS256';
        header.alg = 'HS256';
        secret = Buffer.from(this.current.publicKey.export({ type: 'spki', format: 'pem' }) as string);
        break;
      case 'ES384-header':
        header.alg = 'ES384';
        break;
    }
    if (j.foreignKey) key = newEcSigningKey().privateKey;
    if (j.embeddedKey) {
      const atk = attackerKey();
      key = atk.privateKey;
      if (j.embeddedKey === 'jwk') header.jwk = atk.publicJwk;
      if (j.embeddedKey === 'jku') header.jku = `${this.sandboxUrl}/attacker-jwks`;
      if (j.embeddedKey === 'x5c') header.x5c = [atk.certB64];
      if (j.embeddedKey === 'x5u') header.x5u = `${this.sandboxUrl}/attacker-cert`;
    }
    if (j.kid !== undefined) header.kid = j.kid;
    if (j.noKid) delete header.kid;
    let compact = signCompact(header, payload, alg, key, secret);
    if (j.badSignature) {
      const [h, p, s] = compact.split('.') as [string, string, string];
      const bytes = unb64u(p);
      // Change one character inside the first string value after "sub" (or the last value byte): still JSON.
      const idx = bytes.indexOf('"sub":"') >= 0 ? bytes.indexOf('"sub":"') + 7 : bytes.length - 2;
      bytes[idx] = bytes[idx] === 0x41 ? 0x42 : 0x41;
      compact = `${h}.${b64u(bytes)}.${s}`;
    }
    return compact;
  }

  /** Sign, then encrypt to the RP (with the JOSE misbehaviour applied to both layers). */
  protected async seal(
    claims: JsonObject,
    jm: JoseMisbehaviour | undefined,
    client: ClientRegistration,
    defaults: { alg?: string; enc: ContentEnc },
    inner?: string,
  ): Promise<string> {
    const j = jm ?? {};
    const jws = inner ?? (await this.signWith(claims, j));
    if (j.unencrypted) return jws;
    const rpKey = await this.rpEncKey(client, j.jweEncryptToKid);
    const wanted = j.jweAlg ?? (defaults.alg as never) ?? (['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'].includes(String(rpKey.alg)) ? rpKey.alg : 'ECDH-ES+A256KW');
    const kid = j.jweKid === 'missing' ? undefined : j.jweKid === 'unknown' ? 'sandbox-unknown-enc-kid' : rpKey.kid;
    let jwe = await encryptForRp(Buffer.from(jws), rpKey, { alg: wanted, enc: j.jweEnc ?? defaults.enc, kid, header: { cty: 'JWT' }, zip: j.zip, epk: j.epk });
    if (j.tamper) jwe = tamperJwe(jwe, j.tamper);
    return jwe;
  }

  /**
   * [53] The other kind of JWT to put inside the ID token's JWE instead of an ID token (`substitute` switch), or
   * undefined for the real one. `authInfoClaims` is the provider's authorization-info-shaped claim set.
   */
  protected substituteIdToken(
    substitute: JoseMisbehaviour['substitute'],
    o: { accessToken: string; clientId: string; sub: string; nowS: number; authInfoClaims: () => JsonObject },
  ): string | undefined {
    switch (substitute) {
      case 'accessToken':
        return o.accessToken;
      case 'authInfo':
        return this.sign(o.authInfoClaims());
      case 'logoutToken':
        return this.sign({ iss: this.issuer, aud: o.clientId, sub: o.sub, iat: o.nowS, exp: o.nowS + 120, jti: randomToken(12), events: { 'http://schemas.openid.net/event/backchannel-logout': {} } }, 'logout+jwt');
      case 'dpopProof':
        return this.dpopProofLike(this.tokenEndpoint);
    }
    return undefined;
  }

  /** Token-response switches shared by both providers ([22–27]). */
  protected finishTokenResponse(body: JsonObject, dpop: boolean): JsonObject {
    const m = this.m;
    let out: JsonObject = { ...body };
    if (dpop && m.tokenTypeBearer) out.token_type = 'Bearer';
    if (m.tokenTypeCase) {
      const t = String(out.token_type);
      out.token_type = m.tokenTypeCase === 'lower' ? t.toLowerCase() : m.tokenTypeCase === 'upper' ? t.toUpperCase() : [...t].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
    }
    if (m.tokenNoExpiresIn) delete out.expires_in;
    if (m.tokenNoScope) delete out.scope;
    if (m.tokenNoIdToken) delete out.id_token;
    out = applyOverrides(out, m.tokenFields, { nowS: this.nowS(), clientId: '' });
    return out;
  }

  // ---- authorization responses ------------------------------------------------------------------------------------
  /**
   * Redirect back to the RP with `code`/`error`, `state` and (if the provider sends it) `iss`, with the authorization-response switches
   * applied. `mode` form_post answers with an auto-submitting HTML form.
   */
  protected async authRespond(
    res: http.ServerResponse,
    rec: RecordedRequest,
    o: { redirectUri: string; mode: 'query' | 'fragment' | 'form_post'; state?: string; code?: string; error?: { error: string; description?: string } },
  ): Promise<void> {
    const m = this.m;
    const params: Array<[string, string]> = [];
    if (o.error) {
      params.push(['error', o.error.error]);
      if (o.error.description) params.push(['error_description', o.error.description]);
    } else params.push(['code', m.authEmptyCode ? '' : o.code!]);
    if (m.authState === 'wrong') params.push(['state', o.state ? `${o.state}x` : 'wrong-state']);
    else if (m.authState === 'unsolicited') params.push(['state', o.state ?? `unsolicited-${randomToken(8)}`]);
    else if (m.authState !== 'missing' && o.state !== undefined) params.push(['state', o.state]);
    // Without a switch, `iss` is sent only by a provider that advertises it; any `authIss` variant is sent regardless.
    const iss = m.authIss ? distortIssuer(this.issuer, m.authIss, this.otherIssuer()) : this.issParameter ? this.issuer : undefined;
    if (iss !== undefined) params.push(['iss', m.authIss === 'doubleEncoded' ? encodeURIComponent(iss) : iss]);
    if (m.authDuplicateParam) {
      let first = params.find(([k]) => k === m.authDuplicateParam);
      // A provider that sends no `iss` still gets two copies: the true issuer, then another value.
      if (!first && m.authDuplicateParam === 'iss') params.push((first = ['iss', this.issuer]));
      params.push([m.authDuplicateParam, first ? `${first[1]}x` : 'duplicate']);
    }
    if (m.authExtraArtifact) {
      const now = this.nowS();
      const jwt = this.sign({ iss: this.issuer, aud: 'front-channel', sub: 'front-channel', iat: now, exp: now + 60 });
      params.push([m.authExtraArtifact, m.authExtraArtifact === 'access_token' || m.authExtraArtifact === 'token' ? randomToken() : jwt]);
    }
    const qs = new URLSearchParams(params).toString();
    rec.status = o.mode === 'form_post' ? 200 : 302;
    if (o.error) rec.error = o.error.error;
    if (o.mode === 'form_post') {
      const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      const inputs = params.map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
      const html = `<!doctype html><html><head><title>Submit</title></head><body onload="document.forms[0].submit()"><form method="post" action="${esc(o.redirectUri)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form></body></html>`;
      return this.raw(res, rec, 200, html, 'text/html; charset=utf-8');
    }
    const location = o.mode === 'fragment' ? `${o.redirectUri}#${qs}` : `${o.redirectUri}${o.redirectUri.includes('?') ? '&' : '?'}${qs}`;
    res.writeHead(302, { location, 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  }

  /** Headless user choice: `sandbox_user` query, else `X-Sandbox-User` header, else the first fixture. */
  protected chooseUser<U extends { id: string }>(req: http.IncomingMessage, url: URL, users: readonly U[]): U {
    const wanted = url.searchParams.get('sandbox_user') ?? (req.headers['x-sandbox-user'] as string | undefined);
    if (!wanted) return users[0];
    const u = users.find((x) => x.id === wanted);
    if (!u) throw new Refusal(400, 'invalid_request', `unknown sandbox user ${wanted}; known: ${users.map((x) => x.id).join(', ')}`);
    return u;
  }

  /** Thumbprint helper for DPoP keys. */
  protected async thumbprint(jwk: JWK): Promise<string> {
    return calculateJwkThumbprint(jwk, 'sha256');
  }

  /** A throw-away DPoP-proof-shaped JWT (for the cross-JWT confusion switch). */
  protected dpopProofLike(htu: string): string {
    const k = newEcSigningKey();
    const { kid: _k, use: _u, alg: _a, ...jwk } = k.publicJwk;
    return signCompact({ alg: 'ES256', typ: 'dpop+jwt', jwk }, Buffer.from(JSON.stringify({ jti: randomToken(12), htm: 'POST', htu, iat: this.nowS() })), 'ES256', k.privateKey);
  }
}

export type { LoginEndpoint };
