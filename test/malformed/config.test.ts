/** @jest-environment ./test/malformed/environment.ts */
import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { parseSignConfig } from '../../cli/commands/sign';
import { RemoteKeySet, loadEncryptionKey, loadSigningKey, type LoadedKey } from '../../src/keys';
import { createCorppassClient, createSingpassClient } from '../../src/login';
import { SigningApiClient, createWebhookVerifier, signingEnvironment } from '../../src/sign';
import { expectTypedError, trapUnhandledRejections } from './harness';

/**
 * Settings as a low-code user types them into a credential, a node or the CLI's --config file: each wrong value is
 * refused when the client is built (not at the first delivery or login), as INVALID_INPUT naming the setting.
 */
trapUnhandledRejections();

const KEY_SET_URL = 'https://static.staging.sign.singpass.gov.sg/.well-known/keys.json';
const jwkOf = (crv: string) => generateKeyPairSync('ec', { namedCurve: crv }).privateKey.export({ format: 'jwk' }) as JWK;
let sig: LoadedKey;
let enc: LoadedKey;
let enc2: LoadedKey;
beforeAll(async () => {
  sig = await loadSigningKey({ key: jwkOf('P-256') });
  enc = await loadEncryptionKey({ key: jwkOf('P-256') });
  enc2 = await loadEncryptionKey({ key: jwkOf('P-256'), kid: enc.kid });
});

/** [row name, the setting the error must name, a function building the client with that one setting wrong] */
type Row = [string, string, () => unknown];

const urlRows = (field: string, build: (url: unknown) => unknown): Row[] => [
  [`${field} missing`, field, () => build(undefined)],
  [`${field} empty`, field, () => build('')],
  [`${field} not a URL`, field, () => build('static.staging.sign.singpass.gov.sg/keys.json')],
  [`${field} plain http on a public host`, field, () => build('http://static.staging.sign.singpass.gov.sg/.well-known/keys.json')],
  [`${field} custom scheme`, field, () => build('javascript:alert(1)')],
  [`${field} a number`, field, () => build(443)],
  [`${field} with terminal escapes`, field, () => build('not a url\u001b[31m\u0000')],
];

const webhook = (o: Record<string, unknown>) => () => createWebhookVerifier({ keySetUrl: KEY_SET_URL, ...o } as never);
const webhookRows: Row[] = [
  ['options missing', 'options', () => createWebhookVerifier(undefined as never)],
  ...urlRows('keySetUrl', (keySetUrl) => createWebhookVerifier({ keySetUrl } as never)),
  ['refetchCooldownSeconds negative', 'refetchCooldownSeconds', webhook({ refetchCooldownSeconds: -1 })],
  ['refetchCooldownSeconds a string', 'refetchCooldownSeconds', webhook({ refetchCooldownSeconds: '30' })],
  ['refetchCooldownSeconds NaN', 'refetchCooldownSeconds', webhook({ refetchCooldownSeconds: NaN })],
  ['timeoutMs zero', 'timeoutMs', webhook({ timeoutMs: 0 })],
  ['timeoutMs fractional', 'timeoutMs', webhook({ timeoutMs: 1.5 })],
  ['timeoutMs Infinity', 'timeoutMs', webhook({ timeoutMs: Infinity })],
  ['duplicateWindowSeconds zero', 'duplicateWindowSeconds', webhook({ duplicateWindowSeconds: 0 })],
  ['duplicateWindowSeconds a year', 'duplicateWindowSeconds', webhook({ duplicateWindowSeconds: 365 * 86400 })],
  ['clockToleranceSeconds an hour', 'clockToleranceSeconds', webhook({ clockToleranceSeconds: 3600 })],
  ['clockToleranceSeconds negative', 'clockToleranceSeconds', webhook({ clockToleranceSeconds: -5 })],
  ['key set minCacheSeconds negative', 'minCacheSeconds', () => new RemoteKeySet(KEY_SET_URL, { minCacheSeconds: -1 })],
  ['key set maxCacheSeconds a string', 'maxCacheSeconds', () => new RemoteKeySet(KEY_SET_URL, { maxCacheSeconds: 'a day' as never })],
];

const API = 'https://staging.sign.singpass.gov.sg/api/v1';
const client = (o: Record<string, unknown>) => () => new SigningApiClient({ baseUrl: API, clientId: 'client-1', signingKey: sig, ...o } as never);
const clientRows: Row[] = [
  ['config missing', 'config', () => new SigningApiClient(undefined as never)],
  ...urlRows('baseUrl', (baseUrl) => new SigningApiClient({ baseUrl, clientId: 'client-1', signingKey: sig } as never)),
  ['baseUrl with a query', 'baseUrl', client({ baseUrl: `${API}?x=1` })],
  ['clientId missing', 'clientId', client({ clientId: undefined })],
  ['clientId blank', 'clientId', client({ clientId: '   ' })],
  ['signingKey missing', 'signingKey', client({ signingKey: undefined })],
  ['signingKey an encryption key', 'signingKey', () => new SigningApiClient({ baseUrl: API, clientId: 'client-1', signingKey: enc } as never)],
  ['auth.basic without secret', 'auth.basic', client({ signingKey: undefined, auth: { basic: { clientId: 'c', clientSecret: '' } } })],
  ['timeoutMs negative', 'timeoutMs', client({ timeoutMs: -1 })],
  ['timeoutMs an hour', 'timeoutMs', client({ timeoutMs: 3_600_000 })],
  ['assertionLifetimeSeconds zero', 'assertionLifetimeSeconds', client({ assertionLifetimeSeconds: 0 })],
  ['assertionLifetimeSeconds a day', 'assertionLifetimeSeconds', client({ assertionLifetimeSeconds: 86400 })],
  ['retry.attempts zero', 'retry.attempts', client({ retry: { attempts: 0 } })],
  ['retry.attempts 1000', 'retry.attempts', client({ retry: { attempts: 1000 } })],
  ['retry.delayMs negative', 'retry.delayMs', client({ retry: { delayMs: -10 } })],
  ['audience empty', 'audience', client({ audience: '' })],
  ['audience a number', 'audience', client({ audience: 42 })],
  ['environment "prod"', 'environment', () => signingEnvironment('prod')],
  ['environment "Staging" (case)', 'environment', () => signingEnvironment('Staging')],
  ['environment missing', 'environment', () => signingEnvironment(undefined)],
];

const ISSUER = 'https://stg-id.singpass.gov.sg/fapi';
const REDIRECT = 'https://app.example.sg/callback';
const login = (o: Record<string, unknown>) => () =>
  createSingpassClient({ issuer: ISSUER, clientId: 'client-1', signingKey: sig, decryptionKeys: [enc], redirectUri: REDIRECT, ...o } as never);
const loginRows: Row[] = [
  ['options missing', 'options', () => createSingpassClient(undefined as never)],
  ...urlRows('issuer', (issuer) => login({ issuer })()),
  ['redirectUri custom app scheme', 'redirectUri', login({ redirectUri: 'myapp://callback' })],
  ['redirectUri plain http', 'redirectUri', login({ redirectUri: 'http://app.example.sg/callback' })],
  ['clientId empty', 'clientId', login({ clientId: '' })],
  ['signingKey a raw JWK (not loaded)', 'signingKey', login({ signingKey: jwkOf('P-256') })],
  ['signingKey an encryption key', 'signingKey', () => login({ signingKey: enc })()],
  ['decryptionKeys empty', 'decryptionKeys', login({ decryptionKeys: [] })],
  ['decryptionKeys holding a signing key', 'decryptionKeys', () => login({ decryptionKeys: [sig] })()],
  ['decryptionKeys sharing a kid', 'decryptionKeys', () => login({ decryptionKeys: [enc, enc2] })()],
  ['timeoutMs a string', 'timeoutMs', login({ timeoutMs: '5000' })],
  ['transactionTtlSeconds 5', 'transactionTtlSeconds', login({ transactionTtlSeconds: 5 })],
  ['transactionTtlSeconds NaN', 'transactionTtlSeconds', login({ transactionTtlSeconds: NaN })],
  ['requiredAcr not a level', 'requiredAcr', login({ requiredAcr: 'urn:singpass:authentication:loa:two' })],
  ['Corppass issuer plain http', 'issuer', () => createCorppassClient({ issuer: 'http://stg-id.corppass.gov.sg', clientId: 'c', signingKey: sig, decryptionKeys: [enc], redirectUri: REDIRECT } as never)],
];

const CLI_CONFIG = {
  signApiBaseUrl: API, clientId: 'client-1', signingKey: jwkOf('P-256'), serviceKeySetUrl: KEY_SET_URL,
  listenPort: 8080, trustedRoots: ['root.pem'], domainName: 'app.example.sg',
};
const cli = (o: Record<string, unknown>) => () => parseSignConfig(JSON.stringify({ ...CLI_CONFIG, ...o }));
const cliRows: Row[] = [
  ['file not JSON', 'config', () => parseSignConfig('signApiBaseUrl = https://x')],
  ['serviceKeySetUrl not a URL', 'config.serviceKeySetUrl', cli({ serviceKeySetUrl: 'keys.json' })],
  ['serviceKeySetUrl plain http on a public host', 'config.serviceKeySetUrl', cli({ serviceKeySetUrl: 'http://static.staging.sign.singpass.gov.sg/.well-known/keys.json' })],
  ['serviceKeySetUrl missing', 'config.serviceKeySetUrl', cli({ serviceKeySetUrl: undefined })],
  ['signApiBaseUrl not a URL', 'config.signApiBaseUrl', cli({ signApiBaseUrl: 'staging.sign.singpass.gov.sg' })],
  ['clientId a number', 'config.clientId', cli({ clientId: 7 })],
  ['signingKey a string', 'config.signingKey', cli({ signingKey: 'eyJrdHkiOiJFQyJ9' })],
  ['listenPort 70000', 'config.listenPort', cli({ listenPort: 70000 })],
  ['listenPort a string', 'config.listenPort', cli({ listenPort: '8080' })],
  ['trustedRoots empty', 'config.trustedRoots', cli({ trustedRoots: [] })],
  ['domainName missing', 'config.domainName', cli({ domainName: undefined })],
];

describe.each([
  ['webhook verifier and key set', webhookRows],
  ['signing API client', clientRows],
  ['login clients', loginRows],
  ['CLI --config file', cliRows],
])('malformed settings: %s', (_group, rows) => {
  it.each(rows.map((row) => [row[0], row] as const))('%s', async (_name, [, field, build]) => {
    await expectTypedError(build, { code: 'INVALID_INPUT', field });
  });
});

it('the settings these rows are made from are accepted (rows fail for their defect only)', () => {
  expect(createWebhookVerifier({ keySetUrl: KEY_SET_URL }).keySet.url).toBe(KEY_SET_URL);
  expect(new SigningApiClient({ baseUrl: API, clientId: 'client-1', signingKey: sig as never })).toBeInstanceOf(SigningApiClient);
  expect(typeof login({})().startLogin).toBe('function');
  expect(parseSignConfig(JSON.stringify(CLI_CONFIG)).serviceKeySetUrl).toBe(KEY_SET_URL);
  expect(signingEnvironment('staging').keySetUrl).toBe(KEY_SET_URL);
});

export const CONFIG_ROW_COUNT = [webhookRows, clientRows, loginRows, cliRows].reduce((n, r) => n + r.length, 0);
