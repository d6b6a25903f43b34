import { createPrivateKey, createPublicKey, sign, verify, type KeyObject, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { SingpassFlowsError } from '../errors';
import { JWE_KEY_ALGS } from './algs';

export type EcSigningAlg = 'ES256' | 'ES384' | 'ES512';
/** The key-management algorithms an encryption key may name: exactly those the ID-token / userinfo decryptor accepts. */
export type EcEncryptionAlg = (typeof JWE_KEY_ALGS)[number];
export type EcCurve = 'P-256' | 'P-384' | 'P-521';

/** JOSE curve names of node:crypto's (OpenSSL's) names, as in `KeyObject.asymmetricKeyDetails.namedCurve`. */
export const JOSE_CURVE_OF_OPENSSL: Readonly<Record<string, EcCurve>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

export const SIGNING_ALG_FOR_CURVE: Record<EcCurve, EcSigningAlg> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

/** A private key as a user pastes it into a credential: a private JWK (object or JSON text) or a PEM. */
export interface PrivateKeyInput {
  key: string | JWK;
  /** Overrides (or supplies, for PEM) the key ID; otherwise the JWK's own `kid` or its RFC 7638 thumbprint. */
  kid?: string;
  alg?: string;
}

export interface LoadedKey<A extends string = string> {
  kid: string;
  alg: A;
  use: 'sig' | 'enc';
  crv: EcCurve;
  privateKey: KeyObject;
  /** Public members only, with kid/use/alg: what goes into the published key set. */
  publicJwk: JWK;
}

/** Load an EC signing key (P-256/384/521) for client assertions, `X-Dss-Assertion` and DPoP. */
export async function loadSigningKey(input: PrivateKeyInput): Promise<LoadedKey<EcSigningAlg>> {
  const { keyObject, jwk } = parsePrivateKey(input.key);
  const crv = ecCurveOf(jwk);
  const alg = (input.alg ?? jwk.alg ?? SIGNING_ALG_FOR_CURVE[crv]) as EcSigningAlg;
  if (alg !== SIGNING_ALG_FOR_CURVE[crv]) {
    throw new SingpassFlowsError('KEY_INVALID', `Signing key: algorithm ${alg} does not match curve ${crv} (use ${SIGNING_ALG_FOR_CURVE[crv]})`);
  }
  if (jwk.use && jwk.use !== 'sig') throw new SingpassFlowsError('KEY_INVALID', `Signing key: the JWK is marked use "${jwk.use}", expected "sig"`);
  return finish(keyObject, jwk, crv, alg, 'sig', input.kid);
}

/** Load an EC key that decrypts ID tokens / userinfo sent to us (ECDH-ES key agreement). */
export async function loadEncryptionKey(input: PrivateKeyInput): Promise<LoadedKey<EcEncryptionAlg>> {
  const { keyObject, jwk } = parsePrivateKey(input.key);
  const crv = ecCurveOf(jwk);
  const alg = (input.alg ?? jwk.alg ?? 'ECDH-ES+A256KW') as EcEncryptionAlg;
  if (!(JWE_KEY_ALGS as readonly string[]).includes(alg)) {
    // Direct ECDH-ES is refused by the decryptor (nested-jwt.ts), so a key published for it would fail every login.
    throw new SingpassFlowsError('KEY_INVALID', `Encryption key: algorithm ${JSON.stringify(alg)} is not accepted; set the key's "alg" to one of ${JWE_KEY_ALGS.join(', ')} (ECDH-ES+A256KW is the usual choice) or remove it`, { field: 'alg' });
  }
  if (jwk.use && jwk.use !== 'enc') throw new SingpassFlowsError('KEY_INVALID', `Encryption key: the JWK is marked use "${jwk.use}", expected "enc"`);
  return finish(keyObject, jwk, crv, alg, 'enc', input.kid);
}

async function finish<A extends string>(keyObject: KeyObject, jwk: JWK, crv: EcCurve, alg: A, use: 'sig' | 'enc', kidOverride?: string): Promise<LoadedKey<A>> {
  const pub = createPublicKey(keyObject).export({ format: 'jwk' }) as JWK;
  const kid = kidOverride ?? (typeof jwk.kid === 'string' && jwk.kid ? jwk.kid : await calculateJwkThumbprint({ kty: 'EC', crv, x: pub.x!, y: pub.y! }));
  return { kid, alg, use, crv, privateKey: keyObject, publicJwk: { kty: 'EC', crv, x: pub.x, y: pub.y, kid, use, alg } };
}

function parsePrivateKey(input: string | JWK): { keyObject: KeyObject; jwk: JWK } {
  let source: string | JWK = input;
  if (typeof input === 'string') {
    const text = input.trim();
    if (text.startsWith('{')) {
      try {
        source = JSON.parse(text) as JWK;
      } catch {
        throw new SingpassFlowsError('KEY_INVALID', 'The key looks like JSON but is not valid JSON; paste the whole private JWK');
      }
    } else if (!text.includes('-----BEGIN')) {
      throw new SingpassFlowsError('KEY_INVALID', 'The key is neither a JWK nor a PEM; paste a private JWK or a "-----BEGIN PRIVATE KEY-----" block');
    } else if (text.includes('PUBLIC KEY-----') || text.includes('CERTIFICATE-----')) {
      throw new SingpassFlowsError('KEY_INVALID', 'This is a public key or certificate; the credential needs the PRIVATE key');
    } else {
      source = text;
    }
  }
  if (typeof source !== 'string' && (!source || typeof source !== 'object' || Array.isArray(source))) {
    throw new SingpassFlowsError('KEY_INVALID', 'The key must be a private JWK (an object or its JSON text) or a "-----BEGIN PRIVATE KEY-----" block');
  }
  if (typeof source !== 'string') checkPrivateJwk(source);
  let keyObject: KeyObject;
  try {
    keyObject = typeof source === 'string' ? createPrivateKey({ key: source, format: 'pem' }) : createPrivateKey({ key: source as JsonWebKey, format: 'jwk' });
  } catch (e) {
    // OpenSSL's own words ("DECODER routines::unsupported") tell a user nothing; say what to check instead.
    const protectedPem = typeof source === 'string' && /ENCRYPTED|Proc-Type: 4,ENCRYPTED/.test(source);
    throw new SingpassFlowsError('KEY_INVALID', protectedPem
      ? 'The private key is protected by a passphrase; export it without one (e.g. `openssl pkcs8 -topk8 -nocrypt`)'
      : typeof source === 'string'
        ? 'The PEM block cannot be read: it is damaged, truncated, or not a PKCS#8 / EC private key'
        : 'The JWK cannot be read as a private key: its "x", "y" and "d" do not form a key on its curve', {}, { cause: e });
  }
  if (keyObject.asymmetricKeyType !== 'ec') {
    throw new SingpassFlowsError('KEY_UNSUPPORTED', `Only EC keys (P-256, P-384, P-521) are accepted by Singpass and Corppass; this is a ${keyObject.asymmetricKeyType} key`);
  }
  const curve = keyObject.asymmetricKeyDetails?.namedCurve;
  const crv = JOSE_CURVE_OF_OPENSSL[String(curve)];
  if (!crv) throw new SingpassFlowsError('KEY_UNSUPPORTED', `EC curve ${curve ?? '(unknown)'} is not accepted; use P-256, P-384 or P-521`);
  checkKeyPair(keyObject);
  const jwk = typeof source === 'string' ? ({} as JWK) : source;
  return { keyObject, jwk: { ...jwk, crv } };
}

const PRIVATE_SCALAR_BYTES: Record<EcCurve, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

/** The members of an EC private JWK, each named when missing or wrong (node:crypto's own messages are internals). */
function checkPrivateJwk(jwk: JWK): void {
  if (jwk.kty !== 'EC') {
    throw new SingpassFlowsError('KEY_UNSUPPORTED', `Only EC keys (P-256, P-384, P-521) are accepted by Singpass and Corppass; this JWK has kty ${JSON.stringify(jwk.kty ?? null)}`);
  }
  if (jwk.crv !== 'P-256' && jwk.crv !== 'P-384' && jwk.crv !== 'P-521') {
    throw new SingpassFlowsError('KEY_UNSUPPORTED', `EC curve ${JSON.stringify(jwk.crv ?? null)} is not accepted; use P-256, P-384 or P-521`);
  }
  if (typeof jwk.d !== 'string') throw new SingpassFlowsError('KEY_INVALID', 'The JWK has no private part ("d"); the credential needs the PRIVATE key');
  for (const m of ['x', 'y'] as const) {
    if (typeof jwk[m] !== 'string' || jwk[m] === '') throw new SingpassFlowsError('KEY_INVALID', `The JWK has no "${m}"; paste the whole private JWK`);
  }
  if (Buffer.from(jwk.d, 'base64url').length !== PRIVATE_SCALAR_BYTES[jwk.crv]) {
    throw new SingpassFlowsError('KEY_INVALID', `The JWK's "d" is not a ${jwk.crv} private key (wrong length); paste the whole private JWK`);
  }
}

/** A JWK's d must belong to its x/y: otherwise every signature fails at the service, far from the cause. */
function checkKeyPair(privateKey: KeyObject): void {
  const probe = Buffer.from('singpass-flows key check');
  const signature = sign(null, probe, privateKey);
  if (!verify(null, probe, createPublicKey(privateKey), signature)) {
    throw new SingpassFlowsError('KEY_INVALID', 'The private key does not match its public part ("d" is not the key of "x"/"y"); paste the whole private JWK as generated');
  }
}

function ecCurveOf(jwk: JWK): EcCurve {
  if (jwk.crv === 'P-256' || jwk.crv === 'P-384' || jwk.crv === 'P-521') return jwk.crv;
  throw new SingpassFlowsError('KEY_UNSUPPORTED', `EC curve ${jwk.crv ?? '(unknown)'} is not accepted; use P-256, P-384 or P-521`);
}
