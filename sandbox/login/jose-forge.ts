/**
 * Hand-rolled JOSE for the sandbox providers. The sandbox must be able to produce tokens no honest library would
 * (alg none, HMAC keyed with a public key, duplicate members, tampered JWE headers, zip), so signing and the JWE
 * content layer are written out here with node:crypto; `jose` is only used for ECDH-ES key management (epk + key
 * wrapping), whose output we then freely re-wrap with our own protected header.
 */
import * as crypto from 'node:crypto';
import * as zlib from 'node:zlib';
import { FlattenedEncrypt, CompactEncrypt, type JWK } from 'jose';

export const b64u = (data: Buffer | Uint8Array | string): string => Buffer.from(data).toString('base64url');
export const unb64u = (s: string): Buffer => Buffer.from(s, 'base64url');

export type JsonObject = Record<string, unknown>;

/** A provider-side EC signing key. */
export interface SigKey {
  kid: string;
  privateKey: crypto.KeyObject;
  publicKey: crypto.KeyObject;
  /** Public JWK with kid/use/alg. */
  publicJwk: JWK;
}

export function newEcSigningKey(kid?: string, curve: 'P-256' | 'P-384' = 'P-256'): SigKey {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: curve });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  const id = kid ?? `sbx-${crypto.randomBytes(6).toString('hex')}`;
  return { kid: id, privateKey, publicKey, publicJwk: { ...jwk, kid: id, use: 'sig', alg: curve === 'P-256' ? 'ES256' : 'ES384' } };
}

export function privateJwk(key: SigKey): JWK {
  return { ...(key.privateKey.export({ format: 'jwk' }) as JWK), kid: key.kid, use: 'sig', alg: key.publicJwk.alg };
}

/** Algorithms the sandbox can sign with. `ES384-header` = ES256 signature under an `ES384` header. */
export type ForgeAlg = 'ES256' | 'ES384' | 'RS256' | 'HS256' | 'none';

/**
 * Compact JWS over raw payload bytes. `secret` is the HMAC key for HS256. ECDSA signatures are JOSE (r||s) form.
 */
export function signCompact(header: JsonObject, payload: Buffer, alg: ForgeAlg, key?: crypto.KeyObject, secret?: Buffer): string {
  const input = `${b64u(JSON.stringify(header))}.${b64u(payload)}`;
  let sig: Buffer;
  switch (alg) {
    case 'none':
      sig = Buffer.alloc(0);
      break;
    case 'HS256':
      sig = crypto.createHmac('sha256', secret!).update(input).digest();
      break;
    case 'RS256':
      sig = crypto.sign('sha256', Buffer.from(input), key!);
      break;
    case 'ES256':
    case 'ES384': {
      const hash = key!.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'sha384' : 'sha256';
      sig = crypto.sign(hash, Buffer.from(input), { key: key!, dsaEncoding: 'ieee-p1363' });
      break;
    }
  }
  return `${input}.${b64u(sig)}`;
}

/** Verify an ECDSA compact JWS with a public JWK (used for client assertions and DPoP proofs). */
export function verifyEcCompact(compact: string, jwk: JWK): boolean {
  const parts = compact.split('.');
  if (parts.length !== 3) return false;
  let header: JsonObject;
  try {
    header = JSON.parse(unb64u(parts[0]).toString('utf8')) as JsonObject;
  } catch {
    return false;
  }
  const hashes: Record<string, [string, string]> = { ES256: ['sha256', 'P-256'], ES384: ['sha384', 'P-384'], ES512: ['sha512', 'P-521'] };
  const h = hashes[String(header.alg)];
  if (!h || jwk.kty !== 'EC' || jwk.crv !== h[1]) return false;
  try {
    const key = crypto.createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as crypto.JsonWebKey, format: 'jwk' });
    return crypto.verify(h[0], Buffer.from(`${parts[0]}.${parts[1]}`), { key, dsaEncoding: 'ieee-p1363' }, unb64u(parts[2]));
  } catch {
    return false;
  }
}

export function decodeCompact(compact: string): { header: JsonObject; payload: JsonObject } | undefined {
  const parts = compact.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(unb64u(parts[0]).toString('utf8')) as unknown;
    const payload = JSON.parse(unb64u(parts[1]).toString('utf8')) as unknown;
    if (!isObject(header) || !isObject(payload)) return undefined;
    return { header, payload };
  } catch {
    return undefined;
  }
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------------------------
// JWE content layer
// ---------------------------------------------------------------------------------------------------------------

export type ContentEnc = 'A128GCM' | 'A192GCM' | 'A256GCM' | 'A128CBC-HS256' | 'A192CBC-HS384' | 'A256CBC-HS512';

const CEK_BYTES: Record<ContentEnc, number> = {
  A128GCM: 16,
  A192GCM: 24,
  A256GCM: 32,
  'A128CBC-HS256': 32,
  'A192CBC-HS384': 48,
  'A256CBC-HS512': 64,
};

export function cekLength(enc: ContentEnc): number {
  return CEK_BYTES[enc];
}

/** RFC 7516/7518 content encryption with AAD = ASCII(protected header segment). */
export function encryptContent(enc: ContentEnc, cek: Buffer, plaintext: Buffer, aad: string): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const aadBuf = Buffer.from(aad, 'ascii');
  if (enc.endsWith('GCM')) {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv(`aes-${cek.length * 8}-gcm` as crypto.CipherGCMTypes, cek, iv);
    cipher.setAAD(aadBuf);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { iv, ciphertext, tag: cipher.getAuthTag() };
  }
  const half = cek.length / 2;
  const macKey = cek.subarray(0, half);
  const encKey = cek.subarray(half);
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv(`aes-${half * 8}-cbc`, encKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aadBuf.length * 8));
  const hash = { 16: 'sha256', 24: 'sha384', 32: 'sha512' }[half] as string;
  const mac = crypto.createHmac(hash, macKey).update(Buffer.concat([aadBuf, iv, ciphertext, al])).digest();
  return { iv, ciphertext, tag: mac.subarray(0, half) };
}

/** Options for {@link encryptForRp}. */
export interface EncryptOptions {
  alg: 'RSA1_5' | 'dir' | 'ECDH-ES' | 'ECDH-ES+A128KW' | 'ECDH-ES+A192KW' | 'ECDH-ES+A256KW';
  enc: ContentEnc;
  /** `kid` header value; `undefined` = omit. */
  kid?: string;
  /** Extra protected-header members (e.g. `cty`). */
  header?: JsonObject;
  zip?: boolean;
  epk?: 'otherCurve' | 'offCurve';
}

/**
 * Encrypt `plaintext` to the RP's public encryption JWK. Key management comes from jose (or a throw-away RSA key /
 * nobody's CEK for `RSA1_5` / `dir`); the protected header is ours, so it can carry anything the switches ask for.
 */
export async function encryptForRp(plaintext: Buffer, rpJwk: JWK, o: EncryptOptions): Promise<string> {
  if (o.alg === 'ECDH-ES') {
    // Direct key agreement: the CEK is derived, so let jose do all of it (no header rewriting possible).
    const hdr: JsonObject = { ...(o.header ?? {}), alg: 'ECDH-ES', enc: o.enc };
    if (o.kid !== undefined) hdr.kid = o.kid;
    return new CompactEncrypt(plaintext).setProtectedHeader(hdr as never).encrypt(publicOnly(rpJwk));
  }
  const cek = crypto.randomBytes(cekLength(o.enc));
  let header: JsonObject = { alg: o.alg, enc: o.enc };
  let encryptedKey: Buffer = Buffer.alloc(0);
  if (o.alg === 'RSA1_5') {
    const { publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    encryptedKey = crypto.publicEncrypt({ key: publicKey, padding: crypto.constants.RSA_PKCS1_PADDING }, cek);
  } else if (o.alg !== 'dir') {
    const wrapped = await new FlattenedEncrypt(Buffer.from('x'))
      .setProtectedHeader({ alg: o.alg, enc: o.enc })
      .setContentEncryptionKey(cek)
      .encrypt(publicOnly(rpJwk));
    header = JSON.parse(unb64u(wrapped.protected!).toString('utf8')) as JsonObject;
    encryptedKey = unb64u(wrapped.encrypted_key!);
  }
  header = { ...header, ...(o.header ?? {}) };
  if (o.kid !== undefined) header.kid = o.kid;
  let body: Buffer = plaintext;
  if (o.zip) {
    header.zip = 'DEF';
    body = zlib.deflateRawSync(plaintext);
  }
  if (o.epk && isObject(header.epk)) header.epk = distortEpk(header.epk, o.epk);
  const protectedSeg = b64u(JSON.stringify(header));
  const { iv, ciphertext, tag } = encryptContent(o.enc, cek, body, protectedSeg);
  return [protectedSeg, b64u(encryptedKey), b64u(iv), b64u(ciphertext), b64u(tag)].join('.');
}

/** Public members only, without alg/use/key_ops: the sandbox decides the algorithm, not the RP's key metadata. */
function publicOnly(jwk: JWK): JWK {
  const { d: _d, alg: _a, use: _u, key_ops: _k, ...pub } = jwk as JWK & { d?: string };
  return pub;
}

function distortEpk(epk: JsonObject, how: 'otherCurve' | 'offCurve'): JsonObject {
  if (how === 'otherCurve') {
    const other = epk.crv === 'P-384' ? 'P-256' : 'P-384';
    const { publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: other });
    return publicKey.export({ format: 'jwk' });
  }
  // Same curve name, but y nudged off the curve: an invalid-curve probe.
  const y = unb64u(String(epk.y));
  y[y.length - 1] = y[y.length - 1] ^ 0x01;
  return { ...epk, y: b64u(y) };
}

/** Post-encryption damage to a compact JWE. */
export function tamperJwe(jwe: string, how: 'ciphertext' | 'iv' | 'tag' | 'header' | 'fourParts' | 'sixParts'): string {
  const parts = jwe.split('.');
  const flip = (i: number) => {
    const b = unb64u(parts[i]);
    if (b.length === 0) return;
    b[Math.floor(b.length / 2)] = b[Math.floor(b.length / 2)] ^ 0x01;
    parts[i] = b64u(b);
  };
  switch (how) {
    case 'ciphertext':
      flip(3);
      return parts.join('.');
    case 'iv':
      flip(2);
      return parts.join('.');
    case 'tag':
      flip(4);
      return parts.join('.');
    case 'header': {
      const h = JSON.parse(unb64u(parts[0]).toString('utf8')) as JsonObject;
      h['x-sandbox'] = 'added after encryption';
      parts[0] = b64u(JSON.stringify(h));
      return parts.join('.');
    }
    case 'fourParts':
      return parts.slice(0, 4).join('.');
    case 'sixParts':
      return [...parts, parts[4]].join('.');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A fixed attacker key with a self-signed certificate (for `x5c` / `jwk` / `jku` header-key probes).
// This key is PUBLIC test material by design; it must never be trusted by anything.
// ---------------------------------------------------------------------------------------------------------------
const ATTACKER_PKCS8 = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8t+HWpLF6Ezhs/g/
K3tEUVY5C2Eii1i6A5+qoHohUuehRANCAAQV3+wDBMy8q+h6yh8U3svUOapUF+Pp
KO56CuAzXi345KeltfdhLGyQmTy5BF92YE/qFj2kLPXxYuznD/MJ3/5Y
-----END PRIVATE KEY-----`;
const ATTACKER_CERT_B64 =
  'MIIBqjCCAU+gAwIBAgIUOJ6/xETveQtLRc+uLFl/xiNNSbIwCgYIKoZIzj0EAwIwKTEnMCUGA1UEAwwec2FuZGJveCBhdHRhY2tlciAobm90IHRydXN0ZWQpMCAXDTI2' +
  'MTEyMjEzMjY0NFoYDzIxMjYxMDI5MTMyNjQ0WjApMScwJQYDVQQDDB5zYW5kYm94IGF0dGFja2VyIChub3QgdHJ1c3RlZCkwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC' +
  'AAQV3+wDBMy8q+h6yh8U3svUOapUF+PpKO56CuAzXi345KeltfdhLGyQmTy5BF92YE/qFj2kLPXxYuznD/MJ3/5Yo1MwUTAdBgNVHQ4EFgQU97rARZTH8fm1jQ/aBbDl' +
  'MO1z7vgwHwYDVR0jBBgwFoAU97rARZTH8fm1jQ/aBbDlMO1z7vgwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAqyiLpez4RSCsG+WN0giQFy74M6X/' +
  'fKlV1cS/dteui5ECIQCgDFcTZ7LIfZv6aEOS01AYiRqPIUOLYLFGrLD7nkWXQw==';

export function attackerKey(): { privateKey: crypto.KeyObject; publicJwk: JWK; certB64: string } {
  const privateKey = crypto.createPrivateKey(ATTACKER_PKCS8);
  const publicJwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { privateKey, publicJwk, certB64: ATTACKER_CERT_B64 };
}
