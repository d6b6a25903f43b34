/**
 * A minimal relying party written with jose directly, only for testing the sandbox providers (it is NOT our client:
 * src/login is tested against the providers separately). It hosts its own key set on 127.0.0.1.
 */
import * as crypto from 'node:crypto';
import { SignJWT, compactDecrypt, compactVerify, createLocalJWKSet, exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK, type CryptoKey } from 'jose';
import { listen, mount, sendJson, type Handler, type RunningServer } from '../../../sandbox/http';
import { createCorppassFapiProvider, createCorppassProvider, createSingpassProvider, type CorppassFapiProvider, type CorppassProvider, type SingpassProvider } from '../../../sandbox/login';

export interface RpKeys {
  sig: { kid: string; privateKey: CryptoKey; publicJwk: JWK };
  enc: { kid: string; privateKey: CryptoKey; publicJwk: JWK };
}

export async function makeRpKeys(): Promise<RpKeys> {
  const s = await generateKeyPair('ES256', { extractable: true });
  const e = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
  return {
    sig: { kid: 'rp-sig-1', privateKey: s.privateKey, publicJwk: { ...(await exportJWK(s.publicKey)), kid: 'rp-sig-1', use: 'sig', alg: 'ES256' } },
    enc: { kid: 'rp-enc-1', privateKey: e.privateKey, publicJwk: { ...(await exportJWK(e.publicKey)), kid: 'rp-enc-1', use: 'enc', alg: 'ECDH-ES+A256KW' } },
  };
}

/** Serve the RP public key set at `/jwks`. */
export async function serveRpJwks(keys: RpKeys): Promise<RunningServer & { jwksUrl: string }> {
  const srv = await listen((_req, res) => sendJson(res, 200, { keys: [keys.sig.publicJwk, keys.enc.publicJwk] }));
  return Object.assign(srv, { jwksUrl: `${srv.baseUrl}/jwks` });
}

/** The sandbox login providers mounted on one 127.0.0.1 server, plus this RP's key set on another. */
export interface SandboxLogin {
  server: RunningServer;
  rpJwks: RunningServer & { jwksUrl: string };
  keys: RpKeys;
  cp: CorppassProvider;
  sp: SingpassProvider;
  /** Corppass FAPI 2.0. */
  cpf: CorppassFapiProvider;
  close(): Promise<void>;
}

/** Start {@link SandboxLogin} and register `clientId` (with `redirectUris`) at the providers named in `registerAt`. */
export async function startSandboxLogin(clientId: string, redirectUris: string[], registerAt: Array<'cp' | 'sp' | 'cpf'>): Promise<SandboxLogin> {
  const keys = await makeRpKeys();
  const rpJwks = await serveRpJwks(keys);
  let handler: Handler = () => undefined;
  const server = await listen((req, res, url) => handler(req, res, url));
  const providers = { cp: createCorppassProvider({ baseUrl: server.baseUrl }), sp: createSingpassProvider({ baseUrl: server.baseUrl }), cpf: createCorppassFapiProvider({ baseUrl: server.baseUrl }) };
  handler = mount([providers.cp, providers.sp, providers.cpf]);
  for (const p of registerAt) providers[p].registerClient({ clientId, jwksUrl: rpJwks.jwksUrl, redirectUris });
  return {
    server, rpJwks, keys, ...providers,
    async close() {
      await server.close();
      await rpJwks.close();
    },
  };
}

export function randomB64(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomB64(32);
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export async function clientAssertion(keys: RpKeys, clientId: string, aud: string, overrides: { iat?: number; exp?: number } = {}): Promise<string> {
  const now = overrides.iat ?? Math.floor(Date.now() / 1000);
  return new SignJWT({ jti: randomB64(16) })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: keys.sig.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(aud)
    .setIssuedAt(now)
    .setExpirationTime(overrides.exp ?? now + 60)
    .sign(keys.sig.privateKey);
}

export interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

export async function makeDpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

/** `extra.expAfterIat`: seconds from `iat` to `exp` (default 60); `null` leaves `exp` out. */
export async function dpopProof(key: DpopKey, htm: string, htu: string, extra: { ath?: string; nonce?: string; expAfterIat?: number | null } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { jti: randomB64(16), htm, htu, iat: now };
  if (extra.expAfterIat !== null) claims.exp = now + (extra.expAfterIat ?? 60);
  if (extra.ath) claims.ath = extra.ath;
  if (extra.nonce) claims.nonce = extra.nonce;
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey);
}

export function ath(accessToken: string): string {
  return crypto.createHash('sha256').update(accessToken).digest('base64url');
}

export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });
}

/** Decrypt a JWE with the RP key and verify the inner JWS against the provider's published key set. */
export async function openNested(jwe: string, keys: RpKeys, providerJwksUrl: string): Promise<{ payload: Record<string, unknown>; jweHeader: Record<string, unknown>; jwsHeader: Record<string, unknown> }> {
  const { plaintext, protectedHeader } = await compactDecrypt(jwe, keys.enc.privateKey, { keyManagementAlgorithms: ['ECDH-ES+A256KW', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW'] });
  const verified = await verifySigned(new TextDecoder().decode(plaintext), providerJwksUrl);
  return { ...verified, jweHeader: protectedHeader as Record<string, unknown> };
}

export async function verifySigned(jws: string, providerJwksUrl: string): Promise<{ payload: Record<string, unknown>; jwsHeader: Record<string, unknown> }> {
  const jwks = (await (await fetch(providerJwksUrl)).json()) as { keys: JWK[] };
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['ES256'] });
  return { payload: JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>, jwsHeader: protectedHeader as Record<string, unknown> };
}

export function decodePart(token: string, i: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[i]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
