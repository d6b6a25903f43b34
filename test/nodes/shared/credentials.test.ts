import { generateKeyPairSync } from 'node:crypto';
import type { ICredentialTestFunctions } from 'n8n-workflow';
import { generateClientKeys } from '../../../src/keys';
import { CREDENTIAL_REUSE_MS, loginOptions, nodeCredential, signSetup } from '../../../nodes/shared/credentials';
import { testNotificationToken, testSignApi } from '../../../nodes/shared/credential-tests';

const pem = (k: import('node:crypto').KeyObject) => k.export({ format: 'pem', type: 'pkcs8' }).toString();

describe('Singpass Sign API credential → signSetup', () => {
  let jwk: Record<string, unknown>;
  beforeAll(async () => {
    jwk = (await generateClientKeys()).signing as Record<string, unknown>;
  });
  const base = () => ({ environment: 'staging', clientId: 'my-dsap', signingKey: JSON.stringify(jwk), tenantId: 't', domainName: 'sign.example.sg' });

  it('accepts a private JWK and resolves the staging URLs from the core table', async () => {
    const s = await signSetup(base());
    expect(s.endpoints.baseUrl).toBe('https://staging.sign.singpass.gov.sg/api/v1');
    expect(s.signingKey.kid).toBe(jwk.kid);
  });

  it('accepts an EC PEM', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const s = await signSetup({ ...base(), signingKey: pem(privateKey) });
    expect(s.signingKey.alg).toBe('ES384');
  });

  it.each([
    ['an RSA key', () => pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey), 'KEY_UNSUPPORTED', /Only EC keys/],
    ['a public key', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'KEY_INVALID', /PRIVATE key/],
    ['malformed JSON', () => '{"kty":"EC",', 'KEY_INVALID', /not valid JSON/],
    ['a JWK without d', () => JSON.stringify({ ...jwk, d: undefined }), 'KEY_INVALID', /no private part/],
    ['a truncated PEM', () => '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----', 'KEY_INVALID', /cannot be read/],
    ['random text', () => 'hello', 'KEY_INVALID', /neither a JWK nor a PEM/],
  ])('refuses %s, naming the credential and the field', async (_what, key, code, message) => {
    const run = signSetup({ ...base(), signingKey: key() });
    await expect(run).rejects.toMatchObject({ code, details: { field: 'DSAP Signing Key' } });
    await expect(run).rejects.toThrow(/^Credential "Singpass Sign API", field "DSAP Signing Key": /);
    await expect(run).rejects.toThrow(message);
  });

  it('names the missing URL of a custom environment', async () => {
    await expect(signSetup({ ...base(), environment: 'custom', baseUrl: 'https://x.example/api/v1' })).rejects.toThrow(/field "Service Key Set URL": is required/);
  });

  it('refuses a plain-http custom base URL (only loopback may be http)', async () => {
    await expect(signSetup({ ...base(), environment: 'custom', baseUrl: 'http://x.example/api/v1', keySetUrl: 'https://x.example/k' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('refuses trusted roots that are not PEM certificates', async () => {
    const s = await signSetup({ ...base(), trustedRoots: 'not a cert' });
    await expect(s.trustedRoots()).rejects.toThrow(/field "Trusted Root Certificates"/);
  });

  it('the credential test reports a bad key as an Error result, not a crash', async () => {
    const r = await testSignApi.call({} as ICredentialTestFunctions, { id: '1', name: 'c', type: 'singpassSignApi', data: { ...base(), signingKey: 'hello' } });
    expect(r.status).toBe('Error');
    expect(r.message).toMatch(/DSAP Signing Key.*\[KEY_INVALID\]/);
  });
});

describe('login credentials → loginOptions', () => {
  let keys: Awaited<ReturnType<typeof generateClientKeys>>;
  beforeAll(async () => {
    keys = await generateClientKeys();
  });
  const base = () => ({
    environment: 'staging', clientId: 'rp', signingKey: JSON.stringify(keys.signing), encryptionKey: JSON.stringify(keys.encryption),
    redirectUri: 'https://rp.example.sg/cb', transactionSecret: 'x'.repeat(32),
  });

  it('resolves the Corppass and Singpass issuers', async () => {
    expect((await loginOptions('corppass', base())).issuer).toBe('https://stg-id.corppass.gov.sg');
    expect((await loginOptions('singpass', { ...base(), environment: 'production' })).issuer).toBe('https://id.singpass.gov.sg/fapi');
    expect((await loginOptions('singpass', { ...base(), environment: 'sandbox', sandboxUrl: 'http://127.0.0.1:5156/' })))
      .toMatchObject({ issuer: 'http://127.0.0.1:5156/singpass/fapi', allowInsecureLoopback: true });
  });

  it('names a signing key pasted into the encryption field', async () => {
    await expect(loginOptions('corppass', { ...base(), encryptionKey: JSON.stringify(keys.signing) }))
      .rejects.toThrow(/^Credential "Corppass", field "Encryption Key": Encryption key: algorithm "ES256" is not accepted/);
  });

  it('refuses a short transaction secret', async () => {
    await expect(loginOptions('corppass', { ...base(), transactionSecret: 'short' })).rejects.toThrow(/field "Transaction Secret": use at least 32/);
  });
});

describe('notification token secret credential test', () => {
  it('accepts a long secret and refuses a short one with the reason', async () => {
    const ok = await testNotificationToken.call({} as ICredentialTestFunctions, { id: '1', name: 'n', type: 't', data: { secret: 's'.repeat(40) } });
    expect(ok.status).toBe('OK');
    const bad = await testNotificationToken.call({} as ICredentialTestFunctions, { id: '1', name: 'n', type: 't', data: { secret: 'short' } });
    expect(bad).toMatchObject({ status: 'Error', message: expect.stringMatching(/at least 32 characters/) });
  });
});

describe('nodeCredential: one read per credential id and process for 30 s (each read costs n8n\'s vm engine an isolate)', () => {
  const node = (credentials?: Record<string, { id: string; name: string }>) => ({ id: 'n', name: 'N', type: 't', typeVersion: 1, position: [0, 0] as [number, number], parameters: {}, ...(credentials ? { credentials } : {}) });
  const ctx = (credentials?: Record<string, { id: string; name: string }>, fail = false) => {
    const reads: string[] = [];
    return {
      reads,
      getNode: () => node(credentials),
      getCredentials: async (type: string) => {
        reads.push(type);
        if (fail) throw new Error('credential not found');
        return { secret: `${type}:${credentials?.[type]?.id ?? 'none'}:${reads.length}` };
      },
    };
  };
  afterEach(() => jest.restoreAllMocks());

  it('reuses a read of the same credential id until 30 s have passed; another id, or a node without ids, reads for itself', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const a = ctx({ testType: { id: 'cred-a', name: 'A' } });
    const first = await nodeCredential(a, 'testType');
    expect(await nodeCredential(a, 'testType')).toBe(first);
    now += CREDENTIAL_REUSE_MS - 1;
    expect(await nodeCredential(a, 'testType')).toBe(first);
    expect(a.reads).toHaveLength(1);
    now += 1;
    expect(await nodeCredential(a, 'testType')).not.toBe(first); // read again: a changed credential takes effect
    expect(a.reads).toHaveLength(2);

    const b = ctx({ testType: { id: 'cred-b', name: 'B' } });
    expect((await nodeCredential(b, 'testType')).secret).toMatch(/^testType:cred-b:/);
    const none = ctx();
    await nodeCredential(none, 'testType');
    await nodeCredential(none, 'testType');
    expect(none.reads).toHaveLength(2);
  });

  it('keeps no failed read: the next call reads again', async () => {
    const broken = ctx({ otherType: { id: 'cred-c', name: 'C' } }, true);
    await expect(nodeCredential(broken, 'otherType')).rejects.toThrow('credential not found');
    await expect(nodeCredential(broken, 'otherType')).rejects.toThrow('credential not found');
    expect(broken.reads).toHaveLength(2);
  });
});
