/** verifyIdToken: what a refused ID token's error carries (never its claims) and the `at_hash` check. */
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { inspect } from 'node:util';
import { CompactEncrypt, SignJWT } from 'jose';
import { generateClientKeys, loadEncryptionKey, type LoadedKey } from '../../src/keys';
import { verifyIdToken } from '../../src/login/id-token';
import type { LoginTransaction } from '../../src/login';
import { SINGPASS_JWE_ENCS } from '../../src/login/wire';

const ISS = 'https://id.example.sg/fapi';
const CID = 'client';
const NRIC = 'S1234567D';
const ACCESS_TOKEN = 'an-opaque-access-token-value';
const { privateKey: opPriv, publicKey: opPub } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const keySet = { getKey: async () => opPub, refreshIfAllowed: async () => false };
const now = Date.now();
const t = Math.floor(now / 1000);
const tx = { nonce: 'n' } as LoginTransaction;
let enc: LoadedKey;

beforeAll(async () => {
  enc = await loadEncryptionKey({ key: (await generateClientKeys()).encryption });
});

/** An ID token from the provider key, encrypted to our key. */
async function idToken(claims: Record<string, unknown>): Promise<string> {
  const inner = await new SignJWT({ iss: ISS, aud: CID, sub: 'u', nonce: 'n', iat: t, exp: t + 600, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'op' }).sign(opPriv);
  return new CompactEncrypt(new TextEncoder().encode(inner)).setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: enc.kid }).encrypt(createPublicKey(enc.privateKey));
}

const verify = (token: string, accessToken = ACCESS_TOKEN) =>
  verifyIdToken(token, { tx, clientId: CID, issuer: ISS, decryptionKeys: [enc], encs: SINGPASS_JWE_ENCS, keySet, clock: () => now, accessToken });

/** Everything a log line or a Node-RED Catch message could show of an error. */
const shown = (e: unknown) => `${inspect(e, { depth: 10 })}\n${JSON.stringify(e)}\n${JSON.stringify((e as Error).cause ?? null)}`;

describe('a refused ID token carries none of its claims', () => {
  it('an expired one says it expired, which claim, and nothing of the NRIC or name (not even in its cause)', async () => {
    const e = await verify(await idToken({ iat: t - 400, exp: t - 100, sub_attributes: { identity_number: NRIC, name: 'TAN AH KOW' } })).catch((x) => x);
    expect(e).toMatchObject({ code: 'ID_TOKEN_INVALID', details: { field: 'exp', claim: 'exp' } });
    expect(e.message).toMatch(/expired/);
    expect(shown(e)).not.toContain(NRIC);
    expect(shown(e)).not.toContain('TAN AH KOW');
  });

  it('one for another audience names the claim and the reason, not the payload', async () => {
    const e = await verify(await idToken({ aud: 'someone-else', sub_attributes: { identity_number: NRIC } })).catch((x) => x);
    expect(e).toMatchObject({ code: 'ID_TOKEN_INVALID', details: { field: 'aud', claim: 'aud', reason: 'check_failed' } });
    expect(e.message).toMatch(/addressed to someone else/);
    expect(shown(e)).not.toContain(NRIC);
  });
});

describe('at_hash', () => {
  const atHash = (token: string) => createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');

  it('a present but wrong at_hash is refused', async () => {
    const e = await verify(await idToken({ at_hash: 'AAAAAAAAAAAAAAAAAAAAAA' })).catch((x) => x);
    expect(e).toMatchObject({ code: 'ID_TOKEN_INVALID' });
    expect(e.message).toMatch(/at_hash/);
  });

  it('an at_hash of another access token is refused; the one of this access token is accepted', async () => {
    const token = await idToken({ at_hash: atHash(ACCESS_TOKEN) });
    await expect(verify(token)).resolves.toMatchObject({ sub: 'u' });
    await expect(verify(token, 'another-access-token')).rejects.toMatchObject({ code: 'ID_TOKEN_INVALID' });
  });

  it('an at_hash that is not text is refused; a missing one is accepted (code flow)', async () => {
    await expect(verify(await idToken({ at_hash: 42 }))).rejects.toMatchObject({ code: 'ID_TOKEN_INVALID' });
    await expect(verify(await idToken({}))).resolves.toMatchObject({ sub: 'u' });
  });
});
