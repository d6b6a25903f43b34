/**
 * The signer page and officer check nodes in node-red-node-test-helper: refusals without a valid link (403, 410 for
 * an expired one, 404 for a session no longer kept), the status JSON of a stored session, a missing client or secret
 * to a Catch node; the officer check on a legacy and a FAPI 2.0 login result, and its refusal page.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { issueSignerLink, type SessionRecord } from '../../src/session';
import { catchNode, configNodes, getNode, helper, keys, nextMessage, positioned, rootPem } from './helper';

/* eslint-disable @typescript-eslint/no-require-imports */
const signerNodes = require('../../node-red/singpass-signer');
/* eslint-enable @typescript-eslint/no-require-imports */

const SECRET = 'signer-page-unit-test-secret-0123456789';
const REF = 'SR-unit-0001';
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-signer-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => helper.unload());

async function load(answer: string, withSecret = true) {
  await helper.load([configNodes, signerNodes, catchNode], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionDir: dir },
    { id: 'f', type: 'tab' },
    { id: 'page', z: 'f', type: 'singpass-signer-page', client: 'client', answer, wires: answer === 'document' ? [['out'], ['refused']] : [['out']] },
    { id: 'catch', z: 'f', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'out', z: 'f', type: 'helper' },
    { id: 'refused', z: 'f', type: 'helper' },
    { id: 'caught', z: 'f', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, ...(withSecret ? { secretNode: { secret: SECRET } } : {}) });
}

const request = (signRef: string, link?: string) => ({ req: { params: { signRef }, query: link === undefined ? {} : { link } } });
async function answer(to: 'out' | 'refused' | 'caught', msg: Record<string, unknown>) {
  const m = nextMessage(getNode(to));
  getNode('page').receive(msg);
  return m;
}

function storeRecord(): void {
  const now = Math.floor(Date.now() / 1000);
  const record = {
    format: 'singpass-flows/signing-session@1', revision: 1, phase: 'waitingForScan', request: { documentName: 'Lease.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
    state: { signRef: REF, status: 'waiting_for_scan', updatedAt: now, expiresAt: now + 300, challengeCode: 'AB12', clientNotificationToken: 'sfn1_secret', qrPayload: 'https://example.sg/qr' },
  } as unknown as SessionRecord;
  fs.writeFileSync(path.join(dir, `${REF}.json`), JSON.stringify(record));
}

test('no link, another purpose\'s link, an expired one: refused pages; a session no longer kept: 404', async () => {
  await load('page');
  const bare = await answer('out', request(REF));
  expect(bare.statusCode).toBe(403);
  expect(bare.headers['content-type']).toMatch(/^text\/html/);
  expect(bare.payload).toContain('This link is not valid for this signing session');
  const download = issueSignerLink({ secret: SECRET, signRef: REF, purpose: 'download' }).token;
  expect((await answer('out', request(REF, download))).statusCode).toBe(403);
  const expired = issueSignerLink({ secret: SECRET, signRef: REF, purpose: 'page', ttlSeconds: 1, now: Date.now() - 10_000 }).token;
  const old = await answer('out', request(REF, expired));
  expect(old.statusCode).toBe(410);
  expect(old.payload).toContain('This signing page link has expired');
  const gone = issueSignerLink({ secret: SECRET, signRef: 'SR-unit-gone', purpose: 'page' }).token;
  expect((await answer('out', request('SR-unit-gone', gone))).statusCode).toBe(404);
});

test('status: the stored session in plain words, nothing secret; the document answer refuses on its second output', async () => {
  storeRecord();
  await load('status');
  const ok = await answer('out', request(REF, issueSignerLink({ secret: SECRET, signRef: REF, purpose: 'page' }).token));
  expect(ok.statusCode).toBe(200);
  expect(ok.headers).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  expect(ok.payload).toMatchObject({ signRef: REF, stage: 'waitingForScan', challengeCode: 'AB12', qrPayload: 'https://example.sg/qr' });
  expect(JSON.stringify(ok.payload)).not.toContain('sfn1_secret');
  const bad = await answer('out', request(REF, 'garbage'));
  expect(bad.statusCode).toBe(403);
  expect(bad.payload).toMatchObject({ error: { code: 'LINK_INVALID', message: expect.any(String) } });
  await helper.unload();

  await load('document');
  const notSigned = await answer('refused', request(REF, issueSignerLink({ secret: SECRET, signRef: REF, purpose: 'download' }).token));
  expect(notSigned.statusCode).toBe(404); // waiting for the scan: no signed PDF yet
});

test('a client without its notification secret: the failure goes to a Catch node', async () => {
  await load('page', false);
  const c = await answer('caught', request(REF, 'x'));
  expect(c.error.message).toMatch(/Notification token secret/);
});

describe('officer check', () => {
  async function loadOfficer() {
    await helper.load([signerNodes], positioned([
      { id: 'f', type: 'tab' },
      { id: 'officer', z: 'f', type: 'singpass-officer-check', roles: 'Director, CPF2FAR1', eserviceId: 'SD-CPF2FA', wires: [['ok'], ['no']] },
      { id: 'ok', z: 'f', type: 'helper' },
      { id: 'no', z: 'f', type: 'helper' },
    ]));
  }
  const role = (source: string, r: string, eserviceId = 'SD-CPF2FA') => ({ source, role: r, eserviceId, entitySub: '', startDate: '2020-01-01', endDate: '9999-12-31', parameters: {} });
  const send = (to: 'ok' | 'no', payload: unknown) => {
    const m = nextMessage(getNode(to));
    getNode('officer').receive({ payload });
    return m;
  };

  test('legacy and FAPI 2.0 results: the entity\'s own role lets on with msg.onBehalfOf', async () => {
    await loadOfficer();
    const legacy = await send('ok', { entityInfo: { CPEntID: '201500001A' }, activeRoles: [role('AuthInfo', 'CPF2FAR1')] });
    expect(legacy.onBehalfOf).toEqual({ uen: '201500001A', role: 'CPF2FAR1', eserviceId: 'SD-CPF2FA' });
    const fapi = await send('ok', { entity: { id: '201500001A', name: 'ACME PTE LTD' }, roles: [role('AuthInfo', 'Director')] });
    expect(fapi.onBehalfOf).toEqual({ uen: '201500001A', entityName: 'ACME PTE LTD', role: 'Director', eserviceId: 'SD-CPF2FA' });
  });

  test('a third party\'s role, another e-service\'s, or none: a 403 page naming the role', async () => {
    await loadOfficer();
    for (const roles of [[role('TPAuthInfo', 'Director')], [role('AuthInfo', 'Director', 'SD-OTHER')], []]) {
      const no = await send('no', { entity: { id: '201500001A' }, roles });
      expect(no.statusCode).toBe(403);
      expect(no.error).toMatchObject({ code: 'ROLE_REQUIRED' });
      expect(no.payload).toContain('needs the Corppass role Director or CPF2FAR1 for SD-CPF2FA');
      expect(no.onBehalfOf).toBeUndefined();
    }
  });
});
