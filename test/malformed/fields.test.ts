/** @jest-environment ./test/malformed/environment.ts */
import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { loadSigningKey, type LoadedKey } from '../../src/keys';
import { SigningApiClient, type DocumentHashInput } from '../../src/sign';
import { expectTypedError, trapUnhandledRejections } from './harness';

/**
 * Bad session and hash-call fields, through the public client: each is refused with INVALID_INPUT naming the field
 * BEFORE anything is sent. The client's fetch fails the row if it is ever called.
 */
trapUnhandledRejections();

let client: SigningApiClient;
let fetchCalls = 0;
beforeAll(async () => {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as JWK;
  const signingKey: LoadedKey = await loadSigningKey({ key: jwk });
  client = new SigningApiClient({
    baseUrl: 'https://staging.sign.singpass.gov.sg/api/v1', clientId: 'dsap', signingKey,
    fetch: async () => {
      fetchCalls++;
      throw new Error('validation let bad input through to the network');
    },
  });
});
afterEach(() => {
  const calls = fetchCalls;
  fetchCalls = 0;
  expect(calls).toBe(0);
});

const GOOD: DocumentHashInput = { documentName: 'Contract.pdf', documentHash: 'ab'.repeat(32), challengeCode: '1234', nonce: 'n'.repeat(40), domainName: 'sign.example.sg' };
type HashRow = [string, keyof DocumentHashInput | 'signRef', unknown];
const hashRows: HashRow[] = [
  ['document name empty', 'documentName', ''],
  ['document name of 256 characters', 'documentName', 'a'.repeat(256)],
  ['document name a number', 'documentName', 42],
  ['document name with a NUL', 'documentName', 'Contract\u0000.pdf'],
  ['document name with a line break', 'documentName', 'Contract\n(approved).pdf'],
  ['document name with a right-to-left override', 'documentName', 'Invoice\u202Efdp.exe'],
  ['document name with an ANSI escape', 'documentName', '\u001b[2JContract.pdf'],
  ['hash of 63 hex characters', 'documentHash', 'a'.repeat(63)],
  ['hash of 65 hex characters', 'documentHash', 'a'.repeat(65)],
  ['hash empty', 'documentHash', ''],
  ['hash not hex', 'documentHash', 'g'.repeat(64)],
  ['hash in base64', 'documentHash', Buffer.alloc(32, 1).toString('base64')],
  ['hash with Arabic-Indic digits', 'documentHash', '١'.repeat(64)],
  ['hash with fullwidth digits', 'documentHash', '１'.repeat(64)],
  ['hash with a trailing newline', 'documentHash', `${'a'.repeat(64)}\n`],
  ['hash as bytes', 'documentHash', Buffer.alloc(32)],
  ['hash missing', 'documentHash', undefined],
  ['challenge code of 3 characters', 'challengeCode', '123'],
  ['challenge code of 5 characters', 'challengeCode', '12345'],
  ['challenge code with a space', 'challengeCode', '12 4'],
  ['challenge code with a NUL', 'challengeCode', '12\u00004'],
  ['challenge code a number', 'challengeCode', 1234],
  ['nonce empty', 'nonce', ''],
  ['nonce overlong', 'nonce', 'n'.repeat(5000)],
  ['nonce an object', 'nonce', { nonce: 'x' }],
  ['domain a URL', 'domainName', 'https://sign.example.sg'],
  ['domain with a path', 'domainName', 'sign.example.sg/page'],
  ['domain empty', 'domainName', ''],
  ['domain of 256 characters', 'domainName', `${'a'.repeat(60)}.`.repeat(4) + 'a'.repeat(12)],
  ['domain with unicode (not punycode)', 'domainName', 'bücher.example'],
  ['domain with an underscore', 'domainName', 'my_host.example'],
  ['domain label starting with a hyphen', 'domainName', '-sign.example.sg'],
  ['domain with an empty label', 'domainName', 'sign..example.sg'],
  ['domain with a port beyond 65535', 'domainName', 'sign.example.sg:99999'],
  ['domain with a space', 'domainName', 'sign example.sg'],
  ['app link over http', 'appLink', 'http://app.example.sg/return'],
  ['app link javascript:', 'appLink', 'javascript:alert(1)'],
  ['app link not a URL', 'appLink', 'app.example.sg/return'],
  ['app link of 300 characters', 'appLink', `https://app.example.sg/${'a'.repeat(280)}`],
  ['sign_ref empty', 'signRef', ''],
  ['sign_ref with a tab', 'signRef', 'ref\t1'],
  ['sign_ref ".."', 'signRef', '..'],
  ['sign_ref with a space', 'signRef', 'ref 1'],
  ['sign_ref with unicode', 'signRef', 'réf-1'],
  ['sign_ref overlong', 'signRef', 'r'.repeat(513)],
];

describe('malformed hash-call fields', () => {
  it.each(hashRows)('%s', async (_name, field, value) => {
    const signRef = field === 'signRef' ? value : 'ref-1';
    const input = field === 'signRef' ? GOOD : { ...GOOD, [field]: value };
    await expectTypedError(() => client.submitDocumentHash(signRef as string, input as DocumentHashInput), { code: 'INVALID_INPUT', field });
  });

  it('the good input these rows are made from reaches the network (rows fail for their defect only)', async () => {
    await expectTypedError(() => client.submitDocumentHash('ref-1', { ...GOOD, documentHash: 'AB'.repeat(32), documentName: '合同 Contract (v2).pdf' }), { code: 'HTTP_NETWORK' });
    expect(fetchCalls).toBe(2); // upper-case hex and a unicode name are valid; one retry of a network error
    fetchCalls = 0;
  });
});

type SessionRow = [string, 'clientNotificationToken' | 'tenantId', unknown];
const sessionRows: SessionRow[] = [
  ['notification token empty', 'clientNotificationToken', ''],
  ['notification token of 256 characters', 'clientNotificationToken', 't'.repeat(256)],
  ['notification token with punctuation', 'clientNotificationToken', 'token$1'],
  ['notification token with unicode', 'clientNotificationToken', 'tökén'],
  ['notification token a number', 'clientNotificationToken', 12345],
  ['tenant id empty', 'tenantId', ''],
  ['tenant id with a slash', 'tenantId', 'acme/sg'],
  ['tenant id with a control character', 'tenantId', 'acme\u0007'],
  ['tenant id null', 'tenantId', null],
];

describe('malformed create-session fields', () => {
  it.each(sessionRows)('%s', async (_name, field, value) => {
    await expectTypedError(() => client.createSession({ clientNotificationToken: 'token-1', tenantId: 'acme', [field]: value } as never), { code: 'INVALID_INPUT', field });
  });
});

export const FIELD_ROW_COUNT = hashRows.length + sessionRows.length;
