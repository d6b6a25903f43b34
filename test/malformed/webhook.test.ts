/** @jest-environment ./test/malformed/environment.ts */
import * as crypto from 'node:crypto';
import { SignJWT, base64url, type JWK } from 'jose';
import type { ErrorCode } from '../../src/errors';
import { createWebhookVerifier, type WebhookRequest, type WebhookVerifier } from '../../src/sign';
import { expectReadableMessage, keySetServer, openssl, trapUnhandledRejections } from './harness';

/**
 * Hostile or broken webhook deliveries: each row is answered (never a throw), refused with the expected stable
 * code, with no event, and — for claims — the claim named. WEBHOOK_HANDLER_FAILED would mean a raw exception
 * escaped our own code: no row may produce it.
 */
const rejections = trapUnhandledRejections();

const BEARER = 'notification_token-1';
const svc = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const p384 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' });
const jwk = (k: crypto.KeyObject, kid: string) => ({ ...(k.export({ format: 'jwk' }) as JWK), kid, use: 'sig' });

const certOf = (script: string) => openssl(`${script} -outform DER -out c`, 'c').toString('base64');
const CERT = certOf('openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k -subj /CN=User -days 30');
const RSA512_CERT = certOf('openssl req -x509 -newkey rsa:512 -nodes -keyout k -subj /CN=Weak -days 30');

const now = () => Math.floor(Date.now() / 1000);
const certClaims = (extra: Record<string, unknown> = {}) => ({ sign_ref: 'ref-1', request_type: 'user_cert', user_cert: CERT, nonce: 'n-1', ...extra });
const sigClaims = (extra: Record<string, unknown> = {}) => ({ sign_ref: 'ref-1', request_type: 'signed_doc_hash', doc_hash: 'ab'.repeat(32), doc_hash_signature: '3006020101020101', ...extra });

interface TokenOptions { header?: Record<string, unknown>; iat?: number | null; exp?: number | null; key?: crypto.KeyObject }
async function token(claims: Record<string, unknown>, o: TokenOptions = {}): Promise<string> {
  const iat = o.iat === undefined ? now() : o.iat;
  const exp = o.exp === undefined ? now() + 120 : o.exp;
  const jwt = new SignJWT({ ...claims, ...(iat === null ? {} : { iat }), ...(exp === null ? {} : { exp }) })
    .setProtectedHeader({ alg: 'ES256', kid: 'svc', ...o.header } as never);
  return jwt.sign(o.key ?? svc.privateKey);
}
const b64json = (v: unknown) => base64url.encode(JSON.stringify(v));
/** A token whose parts we assemble ourselves (for what SignJWT refuses to make). */
const raw = (header: unknown, payload: unknown, sig = 'c2ln') => `${b64json(header)}.${b64json(payload)}.${sig}`;
/** Signed by the service key over parts we assemble ourselves. */
const signRaw = (header: unknown, payload: unknown) => {
  const input = `${b64json(header)}.${b64json(payload)}`;
  return `${input}.${base64url.encode(crypto.sign('sha256', Buffer.from(input), { key: svc.privateKey, dsaEncoding: 'ieee-p1363' }))}`;
};
const timed = () => ({ iat: now(), exp: now() + 60 });

const deliver = (jwt: string, headers: WebhookRequest['headers'] = { authorization: `Bearer ${BEARER}` }): WebhookRequest =>
  ({ headers, body: Buffer.from(JSON.stringify({ token: jwt })), expectedToken: BEARER });
const body = (b: WebhookRequest['body'], headers: WebhookRequest['headers'] = { authorization: `Bearer ${BEARER}` }): WebhookRequest =>
  ({ headers, body: b, expectedToken: BEARER });

interface Row { name: string; request: () => Promise<WebhookRequest> | WebhookRequest; code: ErrorCode; status?: 400 | 503; field?: string }
const good = () => token(certClaims());
const bearerRows: Row[] = [
  { name: 'no Authorization header', request: async () => deliver(await good(), {}), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'headers missing altogether', request: async () => deliver(await good(), null as never), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'two Authorization values (array)', request: async () => deliver(await good(), { authorization: [`Bearer ${BEARER}`, `Bearer ${BEARER}`] }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'Authorization twice with different case', request: async () => deliver(await good(), { authorization: `Bearer ${BEARER}`, Authorization: 'Bearer other' }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'empty Authorization array', request: async () => deliver(await good(), { authorization: [] }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'Basic scheme', request: async () => deliver(await good(), { authorization: `Basic ${BEARER}` }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'Token scheme', request: async () => deliver(await good(), { authorization: `Token ${BEARER}` }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'scheme without token', request: async () => deliver(await good(), { authorization: 'Bearer' }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'scheme and blanks only', request: async () => deliver(await good(), { authorization: 'Bearer    ' }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'token without scheme', request: async () => deliver(await good(), { authorization: BEARER }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'wrong token, same length', request: async () => deliver(await good(), { authorization: `Bearer ${BEARER.slice(0, -1)}2` }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'right token with a prefix', request: async () => deliver(await good(), { authorization: `Bearer x${BEARER}` }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'Authorization as a number', request: async () => deliver(await good(), { authorization: 42 as never }), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'fetch Headers without Authorization', request: async () => deliver(await good(), new Headers({ 'x-other': '1' })), code: 'WEBHOOK_UNAUTHORIZED' },
  { name: 'NUL and control characters in the token', request: async () => deliver(await good(), { authorization: `Bearer ${BEARER}\u0000\u0007` }), code: 'WEBHOOK_UNAUTHORIZED' },
];

const bodyRows: Row[] = [
  { name: 'no body', request: () => body(undefined), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'empty body', request: () => body(Buffer.alloc(0)), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'not JSON', request: () => body('token=abc'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'truncated JSON', request: () => body('{"token": "ab'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'binary garbage', request: () => body(crypto.randomBytes(512)), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'JSON null', request: () => body('null'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'JSON array', request: () => body('[{"token":"a.b.c"}]'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'JSON string', request: () => body('"a.b.c"'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'JSON number', request: () => body('42'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token is a number', request: () => body('{"token": 42}'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token is null', request: () => body('{"token": null}'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token is an array', request: () => body('{"token": ["a.b.c"]}'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token is an object', request: () => body('{"token": {"a": 1}}'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token is empty', request: () => body('{"token": ""}'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'token under another name', request: async () => body(JSON.stringify({ jwt: await good() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'parsed object without token', request: () => body({ other: 1 }), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'huge body (8 MB of JSON)', request: () => body(Buffer.from(JSON.stringify({ token: 'a'.repeat(8 << 20) }))), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'huge token in a parsed object', request: () => body({ token: `${'a'.repeat(4 << 20)}.b.c` }), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'deeply nested JSON', request: () => body(`${'['.repeat(100000)}${']'.repeat(100000)}`), code: 'WEBHOOK_TOKEN_INVALID' },
];

const jwtRows: Row[] = [
  { name: 'alg none, unsigned', request: () => deliver(`${b64json({ alg: 'none' })}.${b64json({ ...certClaims(), ...timed() })}.`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'alg HS256 keyed with the public key', request: async () => deliver(await new SignJWT({ ...certClaims(), ...timed() }).setProtectedHeader({ alg: 'HS256', kid: 'svc' }).sign(Buffer.from(JSON.stringify(jwk(svc.publicKey, 'svc'))))), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'alg RS256 over the EC key\'s kid', request: async () => deliver(await token(certClaims(), { header: { alg: 'RS256' }, key: rsa.privateKey })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'alg ES384 with a P-256 kid', request: async () => deliver(await token(certClaims(), { header: { alg: 'ES384' }, key: p384.privateKey })), code: 'WEBHOOK_TOKEN_INVALID', status: 503 },
  { name: 'alg missing', request: () => deliver(raw({ kid: 'svc' }, { ...certClaims(), ...timed() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'alg as a number', request: () => deliver(raw({ alg: 256, kid: 'svc' }, { ...certClaims(), ...timed() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'unknown kid (answered 503: could be a rotation)', request: async () => deliver(await token(certClaims(), { header: { kid: 'nope' } })), code: 'WEBHOOK_TOKEN_INVALID', status: 503 },
  { name: 'kid of the other key', request: async () => deliver(await token(certClaims(), { header: { kid: 'other' } })), code: 'WEBHOOK_TOKEN_INVALID' },
  // No kid can never be fixed by a retry (the spec: pick the key by kid): 400, naming the header.
  { name: 'no kid with two keys published', request: async () => deliver(await token(certClaims(), { header: { kid: undefined } })), code: 'WEBHOOK_TOKEN_INVALID', field: 'kid' },
  { name: 'kid as an object', request: async () => deliver(await token(certClaims(), { header: { kid: { a: 1 } } })), code: 'WEBHOOK_TOKEN_INVALID', field: 'kid' },
  { name: 'embedded jwk header', request: async () => deliver(await token(certClaims(), { header: { jwk: jwk(other.publicKey, 'x') }, key: other.privateKey })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'jku header', request: async () => deliver(await token(certClaims(), { header: { jku: 'https://evil.example/keys' } })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'unknown crit header (validly signed)', request: () => deliver(signRaw({ alg: 'ES256', kid: 'svc', crit: ['exp2'], exp2: 1 }, { ...certClaims(), ...timed() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'b64:false header', request: () => deliver(raw({ alg: 'ES256', kid: 'svc', b64: false, crit: ['b64'] }, { ...certClaims(), ...timed() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'two parts', request: async () => deliver((await good()).split('.').slice(0, 2).join('.')), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'four parts', request: async () => deliver(`${await good()}.x`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'JWE-shaped (five parts)', request: () => deliver('a.b.c.d.e'), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'header not base64url', request: async () => deliver(`%%%.${(await good()).split('.').slice(1).join('.')}`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'header base64url of non-JSON', request: async () => deliver(`${base64url.encode('not json')}.${(await good()).split('.').slice(1).join('.')}`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'header a JSON array', request: () => deliver(raw(['ES256'], { ...certClaims(), ...timed() })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'payload not base64url', request: async () => { const [h, , s] = (await good()).split('.'); return deliver(`${h}.%%%.${s}`); }, code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'payload a JSON array (signed)', request: async () => deliver(await new SignJWT({} as never).setProtectedHeader({ alg: 'ES256', kid: 'svc' }).sign(svc.privateKey).then((t) => { const [h] = t.split('.'); return `${h}.${b64json([1])}.AAAA`; })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'signature not base64url', request: async () => deliver(`${(await good()).split('.').slice(0, 2).join('.')}.***`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'signature empty', request: async () => deliver(`${(await good()).split('.').slice(0, 2).join('.')}.`), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'signature of another key', request: async () => deliver(await token(certClaims(), { key: other.privateKey })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'tampered payload (sign_ref changed)', request: async () => { const [h, , s] = (await good()).split('.'); return deliver(`${h}.${b64json({ ...certClaims({ sign_ref: 'ref-2' }), ...timed() })}.${s}`); }, code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'signature truncated', request: async () => { const t = await good(); return deliver(t.slice(0, -10)); }, code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'exp in the past', request: async () => deliver(await token(certClaims(), { iat: now() - 600, exp: now() - 300 })), code: 'WEBHOOK_TOKEN_EXPIRED' },
  { name: 'iat in the future', request: async () => deliver(await token(certClaims(), { iat: now() + 3600, exp: now() + 3700 })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'lifetime of a day', request: async () => deliver(await token(certClaims(), { exp: now() + 86400 })), code: 'WEBHOOK_TOKEN_INVALID' },
  { name: 'no exp', request: async () => deliver(await token(certClaims(), { exp: null })), code: 'WEBHOOK_TOKEN_INVALID', field: 'exp' },
  { name: 'no iat', request: async () => deliver(await token(certClaims(), { iat: null })), code: 'WEBHOOK_TOKEN_INVALID', field: 'iat' },
  { name: 'exp as a string', request: async () => deliver(await token({ ...certClaims(), exp: String(now() + 60) }, { exp: null })), code: 'WEBHOOK_TOKEN_INVALID', field: 'exp' },
  { name: 'iat as a string', request: async () => deliver(await token({ ...certClaims(), iat: 'yesterday' }, { iat: null })), code: 'WEBHOOK_TOKEN_INVALID', field: 'iat' },
  { name: 'nbf in the future', request: async () => deliver(await token(certClaims({ nbf: now() + 3600 }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'nbf' },
  { name: 'no sign_ref', request: async () => deliver(await token(certClaims({ sign_ref: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'sign_ref' },
  { name: 'sign_ref a number', request: async () => deliver(await token(certClaims({ sign_ref: 7 }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'sign_ref' },
  { name: 'sign_ref empty', request: async () => deliver(await token(certClaims({ sign_ref: '' }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'sign_ref' },
  { name: 'no request_type', request: async () => deliver(await token(certClaims({ request_type: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'request_type' },
  { name: 'request_type an array', request: async () => deliver(await token(certClaims({ request_type: ['user_cert'] }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'request_type' },
  { name: 'unknown request_type', request: async () => deliver(await token(certClaims({ request_type: 'user_certificate_v2' }))), code: 'WEBHOOK_EVENT_UNKNOWN', field: 'request_type' },
  { name: 'request_type in upper case', request: async () => deliver(await token(certClaims({ request_type: 'USER_CERT' }))), code: 'WEBHOOK_EVENT_UNKNOWN', field: 'request_type' },
  { name: 'overlong request_type with control characters', request: async () => deliver(await token(certClaims({ request_type: `x\u0000\u001b[31m${'y'.repeat(5000)}` }))), code: 'WEBHOOK_EVENT_UNKNOWN', field: 'request_type' },
  { name: 'certificate event without nonce', request: async () => deliver(await token(certClaims({ nonce: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'nonce' },
  { name: 'certificate event without certificate', request: async () => deliver(await token(certClaims({ user_cert: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'signature event without doc_hash', request: async () => deliver(await token(sigClaims({ doc_hash: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'signature event without signature', request: async () => deliver(await token(sigClaims({ doc_hash_signature: undefined }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
];

const fieldRows: Row[] = [
  { name: 'doc_hash 63 hex characters', request: async () => deliver(await token(sigClaims({ doc_hash: 'a'.repeat(63) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'doc_hash 65 hex characters', request: async () => deliver(await token(sigClaims({ doc_hash: 'a'.repeat(65) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'doc_hash base64 instead of hex', request: async () => deliver(await token(sigClaims({ doc_hash: crypto.randomBytes(32).toString('base64') }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'doc_hash with unicode digits', request: async () => deliver(await token(sigClaims({ doc_hash: '١'.repeat(64) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'doc_hash with a trailing newline', request: async () => deliver(await token(sigClaims({ doc_hash: `${'a'.repeat(64)}\n` }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash' },
  { name: 'signature not hex', request: async () => deliver(await token(sigClaims({ doc_hash_signature: 'zz'.repeat(36) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
  { name: 'signature of odd hex length', request: async () => deliver(await token(sigClaims({ doc_hash_signature: 'a'.repeat(129) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
  { name: 'signature of 7 bytes', request: async () => deliver(await token(sigClaims({ doc_hash_signature: '30050201010201' }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
  { name: 'signature of 1025 bytes', request: async () => deliver(await token(sigClaims({ doc_hash_signature: 'ab'.repeat(1025) }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
  { name: 'signature odd hex length', request: async () => deliver(await token(sigClaims({ doc_hash_signature: '300' }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'doc_hash_signature' },
];

const certRows: Row[] = [
  { name: 'certificate not base64', request: async () => deliver(await token(certClaims({ user_cert: 'not base64 !!' }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate base64 of text', request: async () => deliver(await token(certClaims({ user_cert: Buffer.from('hello world').toString('base64') }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate truncated', request: async () => deliver(await token(certClaims({ user_cert: Buffer.from(CERT, 'base64').subarray(0, 200).toString('base64') }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate with trailing bytes', request: async () => deliver(await token(certClaims({ user_cert: Buffer.concat([Buffer.from(CERT, 'base64'), Buffer.from([0, 0])]).toString('base64') }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate as PEM', request: async () => deliver(await token(certClaims({ user_cert: `-----BEGIN CERTIFICATE-----\n${CERT}\n-----END CERTIFICATE-----` }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate is a public key (SPKI DER)', request: async () => deliver(await token(certClaims({ user_cert: svc.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate with an RSA-512 key', request: async () => deliver(await token(certClaims({ user_cert: RSA512_CERT }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
  { name: 'certificate a number', request: async () => deliver(await token(certClaims({ user_cert: 12345 }))), code: 'WEBHOOK_TOKEN_INVALID', field: 'user_cert' },
];

let keys: Awaited<ReturnType<typeof keySetServer>>;
let verifier: WebhookVerifier;
beforeAll(async () => {
  keys = await keySetServer([jwk(other.publicKey, 'other'), jwk(svc.publicKey, 'svc')]);
  verifier = createWebhookVerifier({ keySetUrl: keys.url, refetchCooldownSeconds: 3600 });
  await verifier.warmUp();
});
afterAll(() => keys.close());

describe.each([
  ['Authorization header', bearerRows],
  ['body', bodyRows],
  ['JWT', jwtRows],
  ['hash and signature fields', fieldRows],
  ['certificate', certRows],
])('malformed webhook deliveries: %s', (_group, rows) => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const result = await verifier.handle(await row.request());
    expect({ code: result.error?.code, status: result.response.status }).toEqual({ code: row.code, status: row.status ?? 400 });
    expect(result.event).toBeUndefined();
    expectReadableMessage(result.error!.message);
    if (row.field) {
      expect(result.error!.field).toBe(row.field);
      expect(result.error!.message).toContain(row.field);
    }
  });
});

it('the valid token these rows are made from is accepted (the rows fail for their defect only)', async () => {
  expect((await verifier.handle(deliver(await good()))).response.status).toBe(200);
  expect((await verifier.handle(deliver(await token(sigClaims())))).response.status).toBe(200);
  expect(rejections.seen).toEqual([]);
});

export const WEBHOOK_ROW_COUNT = [bearerRows, bodyRows, jwtRows, fieldRows, certRows].reduce((n, r) => n + r.length, 0);
