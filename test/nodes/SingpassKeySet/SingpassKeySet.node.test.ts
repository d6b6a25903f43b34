import { generateClientKeys } from '../../../src/keys';
import { SingpassKeySet } from '../../../nodes/SingpassKeySet/SingpassKeySet.node';
import { executeContext } from '../context';

describe('Singpass Key Set node', () => {
  it('outputs only public members of the DSAP signing key, ready for Respond to Webhook', async () => {
    const keys = await generateClientKeys();
    const ctx = executeContext({ params: { sources: 'sign' }, credentials: { singpassSignApi: { environment: 'staging', clientId: 'd', signingKey: JSON.stringify(keys.signing) } } });
    const [[out]] = await new SingpassKeySet().execute.call(ctx);
    expect(out.json.statusCode).toBe(200);
    expect(out.json.headers).toMatchObject({ 'content-type': 'application/jwk-set+json; charset=utf-8' });
    const body = JSON.parse(out.json.body as string);
    expect(body).toEqual({ keys: [{ kty: 'EC', crv: 'P-256', x: keys.signing.x, y: keys.signing.y, kid: keys.signing.kid, use: 'sig', alg: 'ES256' }] });
    expect(out.json.body).not.toContain('"d"');
    expect(out.pairedItem).toEqual({ item: 0 });
  });

  it('refuses a login credential whose two keys are the same key', async () => {
    const keys = await generateClientKeys();
    const same = { ...keys.signing, use: undefined, alg: undefined, kid: 'k' };
    const ctx = executeContext({
      params: { sources: 'corppass' },
      credentials: { corppassApi: { environment: 'staging', clientId: 'c', redirectUri: 'https://x.example/cb', transactionSecret: 'x'.repeat(32), signingKey: JSON.stringify(same), encryptionKey: JSON.stringify({ ...same, kid: 'k2' }) } },
    });
    await expect(new SingpassKeySet().execute.call(ctx)).rejects.toMatchObject({ context: { code: 'KEY_INVALID' } });
  });
});
