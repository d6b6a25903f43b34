import { decodeJwt } from 'jose';
import { generateClientKeys, loadSigningKey, signClientAssertion, type LoadedKey } from '../../src/keys';

let key: LoadedKey;
beforeAll(async () => { key = await loadSigningKey({ key: (await generateClientKeys()).signing }); });

describe('signClientAssertion lifetime cap', () => {
  it('refuses more than 120 s by default and accepts exactly 120 s', async () => {
    await expect(signClientAssertion({ clientId: 'c', key, audience: 'a', lifetimeSeconds: 121 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'lifetimeSeconds' } });
    const claims = decodeJwt(await signClientAssertion({ clientId: 'c', key, audience: 'a', lifetimeSeconds: 120 }));
    expect(claims.exp! - claims.iat!).toBe(120);
  });

  it('enforces a lower cap given by the protocol, naming it in the message', async () => {
    await expect(signClientAssertion({ clientId: 'c', key, audience: 'a', lifetimeSeconds: 31, maxLifetimeSeconds: 30 }))
      .rejects.toMatchObject({ code: 'INVALID_INPUT', message: 'lifetimeSeconds: must be a whole number from 1 to 30' });
  });
});
