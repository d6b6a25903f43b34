import * as crypto from 'node:crypto';

/**
 * Signing of a PRECOMPUTED digest, as the Singpass app does with the `doc_hash` it receives: the 32 bytes are the
 * SHA-256 of the DSAP's CMS SignedAttributes and must NOT be hashed again. node:crypto (and WebCrypto) always hash
 * their input for ECDSA, so ECDSA is done here with plain BigInt arithmetic on the NIST curves (slow-ish but a
 * sandbox signs a handful of digests); RSA uses PKCS#1 v1.5 over a SHA-256 DigestInfo via `privateEncrypt`.
 *
 * The result verifies with `crypto.verify('sha256', signedAttrsDer, { key, dsaEncoding: 'der' }, sig)` whenever
 * `sha256(signedAttrsDer)` equals the digest (tested).
 */

interface Curve {
  p: bigint;
  a: bigint;
  b: bigint;
  n: bigint;
  G: Point;
  bits: number;
}
interface Point {
  x: bigint;
  y: bigint;
}

const h = (s: string): bigint => BigInt('0x' + s);
const curve = (p: string, a: string, b: string, g: string, n: string, bits: number): Curve => {
  const len = (g.length - 2) / 2;
  return { p: h(p), a: h(a), b: h(b), n: h(n), bits, G: { x: h(g.slice(2, 2 + len)), y: h(g.slice(2 + len)) } };
};

// Parameters printed by `openssl ecparam -name <curve> -param_enc explicit -text`.
const CURVES: Record<string, Curve> = {
  'P-256': curve(
    'ffffffff00000001000000000000000000000000ffffffffffffffffffffffff',
    'ffffffff00000001000000000000000000000000fffffffffffffffffffffffc',
    '5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b',
    '046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5',
    'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551',
    256,
  ),
  'P-384': curve(
    'fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff',
    'fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000fffffffc',
    'b3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aef',
    '04aa87ca22be8b05378eb1c71ef320ad746e1d3b628ba79b9859f741e082542a385502f25dbf55296c3a545e3872760ab73617de4a96262c6f5d9e98bf9292dc29f8f41dbd289a147ce9da3113b5f0b8c00a60b1ce1d7e819d7a431d7c90ea0e5f',
    'ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973',
    384,
  ),
  'P-521': curve(
    '01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    '01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffc',
    '0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00',
    '0400c6858e06b70404e9cd9e3ecb662395b4429c648139053fb521f828af606b4d3dbaa14b5e77efe75928fe1dc127a2ffa8de3348b3c1856a429bf97e7e31c2e5bd66011839296a789a3bc0045c8a5fb42c7d1bd998f54449579b446817afbd17273e662c97ee72995ef42640c550b9013fad0761353c7086a272c24088be94769fd16650',
    '01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409',
    521,
  ),
};

const mod = (a: bigint, m: bigint): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

function inv(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new Error('not invertible');
  return mod(oldS, m);
}

// Jacobian coordinates (X, Y, Z) ~ affine (X/Z², Y/Z³); Z = 0 is the point at infinity. Avoids an inversion per step.
type Jac = [bigint, bigint, bigint];

function jDouble(P: Jac, c: Curve): Jac {
  const [X, Y, Z] = P;
  if (Y === 0n || Z === 0n) return [0n, 1n, 0n];
  const p = c.p;
  const YY = mod(Y * Y, p);
  const S = mod(4n * X * YY, p);
  const ZZ = mod(Z * Z, p);
  const M = mod(3n * X * X + c.a * ZZ * ZZ, p);
  const X3 = mod(M * M - 2n * S, p);
  const Y3 = mod(M * (S - X3) - 8n * YY * YY, p);
  const Z3 = mod(2n * Y * Z, p);
  return [X3, Y3, Z3];
}

function jAdd(P: Jac, Q: Jac, c: Curve): Jac {
  if (P[2] === 0n) return Q;
  if (Q[2] === 0n) return P;
  const p = c.p;
  const Z1Z1 = mod(P[2] * P[2], p);
  const Z2Z2 = mod(Q[2] * Q[2], p);
  const U1 = mod(P[0] * Z2Z2, p);
  const U2 = mod(Q[0] * Z1Z1, p);
  const S1 = mod(P[1] * Q[2] * Z2Z2, p);
  const S2 = mod(Q[1] * P[2] * Z1Z1, p);
  if (U1 === U2) return S1 === S2 ? jDouble(P, c) : [0n, 1n, 0n];
  const H = mod(U2 - U1, p);
  const R = mod(S2 - S1, p);
  const HH = mod(H * H, p);
  const HHH = mod(H * HH, p);
  const V = mod(U1 * HH, p);
  const X3 = mod(R * R - HHH - 2n * V, p);
  const Y3 = mod(R * (V - X3) - S1 * HHH, p);
  const Z3 = mod(H * P[2] * Q[2], p);
  return [X3, Y3, Z3];
}

function toAffine(P: Jac, c: Curve): Point | null {
  if (P[2] === 0n) return null;
  const zi = inv(P[2], c.p);
  const zi2 = mod(zi * zi, c.p);
  return { x: mod(P[0] * zi2, c.p), y: mod(P[1] * zi2 * zi, c.p) };
}

function mul(k: bigint, P: Point, c: Curve): Jac {
  let R: Jac = [0n, 1n, 0n];
  let A: Jac = [P.x, P.y, 1n];
  while (k > 0n) {
    if (k & 1n) R = jAdd(R, A, c);
    A = jDouble(A, c);
    k >>= 1n;
  }
  return R;
}

/** The digest as the integer `e` of ECDSA: its leftmost `bits(n)` bits (FIPS 186-4 §6.4). */
function digestToInt(digest: Buffer, c: Curve): bigint {
  let e = h(digest.toString('hex') || '0');
  const extra = digest.length * 8 - c.bits;
  if (extra > 0) e >>= BigInt(extra);
  return e;
}

function randomScalar(c: Curve): bigint {
  const bytes = Math.ceil(c.bits / 8) + 8; // 64 extra bits make the modulo bias negligible
  return (h(crypto.randomBytes(bytes).toString('hex')) % (c.n - 1n)) + 1n;
}

function derInt(v: bigint): Buffer {
  let hex = v.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let b = Buffer.from(hex, 'hex');
  if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return Buffer.concat([Buffer.from([0x02]), derLen(b.length), b]);
}

function derLen(n: number): Buffer {
  return n < 0x80 ? Buffer.from([n]) : Buffer.from([0x81, n]);
}

function curveOf(key: crypto.KeyObject): { c: Curve; jwk: crypto.JsonWebKey } {
  const jwk = key.export({ format: 'jwk' });
  const c = jwk.crv ? CURVES[jwk.crv] : undefined;
  if (jwk.kty !== 'EC' || !c) throw new Error(`unsupported key (kty ${jwk.kty}, crv ${jwk.crv})`);
  return { c, jwk };
}

const b64uInt = (s: string | undefined): bigint => h(Buffer.from(s ?? '', 'base64url').toString('hex') || '0');

// DigestInfo prefix for SHA-256 (RFC 8017 §9.2 note 1).
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

/** How an ECDSA signature is encoded: DER `Ecdsa-Sig-Value` (what the spec says), or raw r||s (what some devices send). */
export type EcdsaEncoding = 'der' | 'raw';

/**
 * Sign a 32-byte SHA-256 digest without hashing it again. EC keys → DER `Ecdsa-Sig-Value` (or raw r||s, each half
 * the curve's size); RSA keys → PKCS#1 v1.5.
 * @example signDigest(createHash('sha256').update(signedAttrsDer).digest(), user.privateKey).toString('hex')
 */
export function signDigest(digest: Buffer, privateKey: crypto.KeyObject, encoding: EcdsaEncoding = 'der'): Buffer {
  if (digest.length !== 32) throw new Error('digest must be 32 bytes (SHA-256)');
  if (privateKey.asymmetricKeyType === 'rsa') {
    return crypto.privateEncrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, digest]));
  }
  const { c, jwk } = curveOf(privateKey);
  const d = b64uInt(jwk.d);
  const e = digestToInt(digest, c);
  for (;;) {
    const k = randomScalar(c);
    const R = toAffine(mul(k, c.G, c), c);
    if (!R) continue;
    const r = mod(R.x, c.n);
    if (r === 0n) continue;
    const s = mod(inv(k, c.n) * (e + r * d), c.n);
    if (s === 0n) continue;
    if (encoding === 'raw') return Buffer.concat([fixedInt(r, c), fixedInt(s, c)]);
    const body = Buffer.concat([derInt(r), derInt(s)]);
    return Buffer.concat([Buffer.from([0x30]), derLen(body.length), body]);
  }
}

function fixedInt(v: bigint, c: Curve): Buffer {
  return Buffer.from(v.toString(16).padStart(Math.ceil(c.bits / 8) * 2, '0'), 'hex');
}

/** DER, else raw r||s when the length is exactly twice the curve's size. */
function readSig(sig: Buffer, c: Curve): { r: bigint; s: bigint } | null {
  const size = Math.ceil(c.bits / 8);
  const der = readDerSig(sig);
  if (der || sig.length !== 2 * size) return der;
  return { r: h(sig.subarray(0, size).toString('hex')), s: h(sig.subarray(size).toString('hex')) };
}

function readDerSig(sig: Buffer): { r: bigint; s: bigint } | null {
  let i = 0;
  const len = (): number => {
    let l = sig[i++];
    if (l === 0x81) l = sig[i++];
    else if (l > 0x80) return -1;
    return l;
  };
  if (sig[i++] !== 0x30) return null;
  if (len() !== sig.length - i) return null;
  const ints: bigint[] = [];
  for (let k = 0; k < 2; k++) {
    if (sig[i++] !== 0x02) return null;
    const l = len();
    if (l <= 0 || i + l > sig.length) return null;
    ints.push(h(sig.subarray(i, i + l).toString('hex')));
    i += l;
  }
  return i === sig.length ? { r: ints[0], s: ints[1] } : null;
}

/** Verify a signature made over a precomputed SHA-256 digest (the service-side check of the phone's answer). */
export function verifyDigest(digest: Buffer, signature: Buffer, publicKey: crypto.KeyObject): boolean {
  if (digest.length !== 32) return false;
  if (publicKey.asymmetricKeyType === 'rsa') {
    try {
      const out = crypto.publicDecrypt({ key: publicKey, padding: crypto.constants.RSA_PKCS1_PADDING }, signature);
      return out.equals(Buffer.concat([SHA256_DIGEST_INFO, digest]));
    } catch {
      return false;
    }
  }
  const { c, jwk } = curveOf(publicKey);
  const sig = readSig(signature, c);
  if (!sig || sig.r <= 0n || sig.r >= c.n || sig.s <= 0n || sig.s >= c.n) return false;
  const Q: Point = { x: b64uInt(jwk.x), y: b64uInt(jwk.y) };
  const w = inv(sig.s, c.n);
  const e = digestToInt(digest, c);
  const X = toAffine(jAdd(mul(mod(e * w, c.n), c.G, c), mul(mod(sig.r * w, c.n), Q, c), c), c);
  return X !== null && mod(X.x, c.n) === sig.r;
}
