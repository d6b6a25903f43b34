/** @jest-environment ./test/malformed/environment.ts */
import * as crypto from 'node:crypto';
import type { JWK } from 'jose';
import type { ErrorCode } from '../../src/errors';
import { loadEncryptionKey, loadSigningKey, type PrivateKeyInput } from '../../src/keys';
import { buildChain } from '../../src/pki';
import { prepareSignature } from '../../src/pades';
import { expectTypedError, openssl, trapUnhandledRejections } from './harness';

/** Keys as users paste them into credentials, and certificates as they reach the PAdES writer and the PKI client. */
trapUnhandledRejections();

const pem = (k: crypto.KeyObject) => k.export({ format: 'pem', type: 'pkcs8' }).toString();
const ec = (curve: string) => crypto.generateKeyPairSync('ec', { namedCurve: curve });
const p256 = ec('P-256');
const p256Jwk = p256.privateKey.export({ format: 'jwk' }) as JWK;
const without = (k: string) => Object.fromEntries(Object.entries(p256Jwk).filter(([name]) => name !== k)) as JWK;

type KeyRow = [string, PrivateKeyInput['key'] | null | number, ErrorCode, PrivateKeyInput?];
const signingKeyRows: KeyRow[] = [
  ['RSA private key (PEM)', pem(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey), 'KEY_UNSUPPORTED'],
  ['RSA private key (JWK)', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as JWK, 'KEY_UNSUPPORTED'],
  ['Ed25519 private key', pem(crypto.generateKeyPairSync('ed25519').privateKey), 'KEY_UNSUPPORTED'],
  ['P-192 key', pem(ec('prime192v1').privateKey), 'KEY_UNSUPPORTED'],
  ['secp256k1 key', pem(ec('secp256k1').privateKey), 'KEY_UNSUPPORTED'],
  ['public-only JWK', without('d'), 'KEY_INVALID'],
  ['JWK missing x', without('x'), 'KEY_INVALID'],
  ['JWK missing y', without('y'), 'KEY_INVALID'],
  ['JWK with an unknown curve', { ...p256Jwk, crv: 'P-257' }, 'KEY_UNSUPPORTED'],
  ['JWK whose d belongs to another key', { ...p256Jwk, d: (ec('P-256').privateKey.export({ format: 'jwk' }) as JWK).d }, 'KEY_INVALID'],
  ['JWK d of the wrong length', { ...p256Jwk, d: 'AAAA' }, 'KEY_INVALID'],
  ['JWK of kty oct', { kty: 'oct', k: 'c2VjcmV0' }, 'KEY_UNSUPPORTED'],
  ['JWK marked for encryption', { ...p256Jwk, use: 'enc' }, 'KEY_INVALID'],
  ['JWK alg not matching its curve', { ...p256Jwk, alg: 'ES384' }, 'KEY_INVALID'],
  ['JSON that is not valid', '{"kty": "EC", ', 'KEY_INVALID'],
  ['JSON array', '[1, 2]', 'KEY_INVALID'],
  ['public key PEM', p256.publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'KEY_INVALID'],
  ['certificate PEM', `-----BEGIN CERTIFICATE-----\n${openssl('openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k -subj /CN=X -days 1 -outform DER -out c', 'c').toString('base64')}\n-----END CERTIFICATE-----`, 'KEY_INVALID'],
  ['PEM with garbage inside', '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----', 'KEY_INVALID'],
  ['PEM with a wrong header', pem(p256.privateKey).replace(/PRIVATE KEY/g, 'SECRET THING'), 'KEY_INVALID'],
  ['PEM truncated', pem(p256.privateKey).slice(0, 80), 'KEY_INVALID'],
  ['passphrase-protected PEM', p256.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' }).toString(), 'KEY_INVALID'],
  ['empty text', '', 'KEY_INVALID'],
  ['base64 DER without PEM armour', p256.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), 'KEY_INVALID'],
  ['null', null, 'KEY_INVALID'],
  ['a number', 42, 'KEY_INVALID'],
];

describe('malformed signing keys', () => {
  // Rows go in whole: it.each would take a fourth parameter missing from a 3-element row for jest's `done` callback.
  it.each(signingKeyRows.map((row) => [row[0], row] as const))('%s', async (_name, [, key, code, extra]) => {
    const before = structuredClone(key);
    await expectTypedError(() => loadSigningKey({ ...extra, key: key as PrivateKeyInput['key'] }), { code });
    expect(key).toEqual(before); // the user's credential object is not altered (e.g. a crv or alg filled in)
  });
});

describe('malformed encryption keys', () => {
  const encryptionKeyRows: KeyRow[] = [
    ['RSA private key', pem(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey), 'KEY_UNSUPPORTED'],
    ['P-192 key', pem(ec('prime192v1').privateKey), 'KEY_UNSUPPORTED'],
    ['public-only JWK', without('d'), 'KEY_INVALID'],
    ['JWK marked for signing', { ...p256Jwk, use: 'sig' }, 'KEY_INVALID'],
    ['unsupported alg RSA-OAEP', p256Jwk, 'KEY_INVALID', { key: p256Jwk, alg: 'RSA-OAEP' }],
  ];
  it.each(encryptionKeyRows.map((row) => [row[0], row] as const))('%s', async (_name, [, key, code, extra]) => {
    await expectTypedError(() => loadEncryptionKey({ ...extra, key: key as PrivateKeyInput['key'] }), { code });
  });

  it('the good key these rows are made from loads (rows fail for their defect only)', async () => {
    expect((await loadSigningKey({ key: p256Jwk })).crv).toBe('P-256');
    expect((await loadSigningKey({ key: pem(p256.privateKey) })).alg).toBe('ES256');
  });
});

const CERT = openssl('openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k -subj /CN=User -days 30 -outform DER -out c', 'c');
type CertRow = [string, unknown];
const certificateRows: CertRow[] = [
  ['not base64', 'this is not a certificate!'],
  ['base64 of text', Buffer.from('hello, world').toString('base64')],
  ['DER truncated', CERT.subarray(0, 100)],
  ['DER with trailing bytes', Buffer.concat([CERT, Buffer.from([1, 2, 3])])],
  ['an empty Buffer', Buffer.alloc(0)],
  ['a private key PEM instead', pem(p256.privateKey)],
  ['PEM whose body is not base64', '-----BEGIN CERTIFICATE-----\n***\n-----END CERTIFICATE-----'],
  ['a number', 42],
];

describe('malformed certificates: the PAdES writer names the option', () => {
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\nxref\n0 3\n0000000000 65535 f \n0000000009 00000 n \n0000000058 00000 n \ntrailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n110\n%%EOF\n', 'latin1');
  it.each(certificateRows)('certificate %s', async (_name, certificate) => {
    await expectTypedError(() => prepareSignature(pdf, { certificate: certificate as string }), { code: 'INVALID_INPUT', field: 'certificate' });
  });
  it.each(certificateRows)('chain[0] %s', async (_name, c) => {
    await expectTypedError(() => prepareSignature(pdf, { certificate: CERT, chain: [c as string] }), { code: 'INVALID_INPUT', field: 'chain[0]' });
  });
});

describe('malformed certificates: building a chain', () => {
  it.each(certificateRows)('%s', async (_name, certificate) => {
    await expectTypedError(() => buildChain(certificate as string, { fetch: async () => { throw new Error('no fetch expected'); } }), { code: 'INVALID_INPUT', field: 'certificate' });
  });
});
