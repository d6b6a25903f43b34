import { generateKeyPairSync } from 'node:crypto';
import { generateClientKeys, loadEncryptionKey, loadSigningKey, publicKeySet } from '../../src';

describe('key loading', () => {
  test('loads a private JWK (object and JSON text) and a PEM; derives alg from the curve', async () => {
    const keys = await generateClientKeys();
    const fromObject = await loadSigningKey({ key: keys.signing });
    expect(fromObject).toMatchObject({ kid: keys.signing.kid, alg: 'ES256', use: 'sig', crv: 'P-256' });
    expect(fromObject.publicJwk).not.toHaveProperty('d');
    const fromText = await loadSigningKey({ key: JSON.stringify(keys.signing) });
    expect(fromText.kid).toBe(keys.signing.kid);
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const fromPem = await loadSigningKey({ key: pem, kid: 'my-kid' });
    expect(fromPem).toMatchObject({ kid: 'my-kid', alg: 'ES384', crv: 'P-384' });
    const thumbKid = await loadSigningKey({ key: pem });
    expect(thumbKid.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('refuses what a low-code user might paste by mistake, with a clear code', async () => {
    const keys = await generateClientKeys();
    const { d: _d, ...publicOnly } = keys.signing;
    await expect(loadSigningKey({ key: publicOnly })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    await expect(loadSigningKey({ key: 'hello' })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    await expect(loadSigningKey({ key: '{broken' })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await expect(loadSigningKey({ key: rsa })).rejects.toMatchObject({ code: 'KEY_UNSUPPORTED' });
    await expect(loadSigningKey({ key: keys.encryption })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    await expect(loadEncryptionKey({ key: keys.signing })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    await expect(loadSigningKey({ key: keys.signing, alg: 'ES384' })).rejects.toMatchObject({ code: 'KEY_INVALID' });
  });

  test('an encryption key for direct ECDH-ES is refused (the decryptor refuses it), given or in the JWK, naming the accepted algs', async () => {
    const keys = await generateClientKeys();
    for (const input of [{ key: keys.encryption, alg: 'ECDH-ES' }, { key: { ...keys.encryption, alg: 'ECDH-ES' } }, { key: JSON.stringify({ ...keys.encryption, alg: 'ECDH-ES' }) }]) {
      const e = await loadEncryptionKey(input).catch((x) => x);
      expect(e).toMatchObject({ code: 'KEY_INVALID', details: { field: 'alg' } });
      expect(e.message).toMatch(/"ECDH-ES" is not accepted.*ECDH-ES\+A128KW, ECDH-ES\+A192KW, ECDH-ES\+A256KW/);
    }
    await expect(loadEncryptionKey({ key: keys.encryption, alg: 'ECDH-ES+A128KW' })).resolves.toMatchObject({ alg: 'ECDH-ES+A128KW', publicJwk: { alg: 'ECDH-ES+A128KW' } });
  });

  test('the published set has public members only and refuses duplicate kids or a key used twice', async () => {
    const keys = await generateClientKeys();
    expect(keys.publicKeySet.keys.map((k) => k.use).sort()).toEqual(['enc', 'sig']);
    expect(JSON.stringify(keys.publicKeySet)).not.toMatch(/"d"/);
    const sig = await loadSigningKey({ key: keys.signing });
    const enc = await loadEncryptionKey({ key: keys.encryption });
    expect(publicKeySet([sig, enc]).keys).toHaveLength(2);
    expect(() => publicKeySet([sig, { publicJwk: { ...enc.publicJwk, kid: sig.kid } }])).toThrow(/share the key ID/);
    expect(() => publicKeySet([sig, { publicJwk: { ...sig.publicJwk, kid: 'other', use: 'enc' } }])).toThrow(/published twice/);
  });
});
