import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { mockDeep } from 'jest-mock-extended';
import type { IWebhookFunctions } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { SingpassSignTrigger } from '../../../nodes/SingpassSignTrigger/SingpassSignTrigger.node';
import { closePgRecordStores, PG_STORE_CREDENTIAL, STORE_CREDENTIAL } from '../../../nodes/shared/record-store';
import { FileSessionStore } from '../../../src/session/file-store';
import type { SessionRecord } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { freePort } from '../../helpers/ports';
import { asN8nLoads, executeContext, pdfItem, testNode } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The Singpass Sign Trigger as the signing service sees it (over real HTTP, from the sandbox) and on its own with a
 * broken credential: every delivery gets the answer the spec requires, and only genuine first-time events start the
 * workflow, on the output for their type.
 */
describe('Singpass Sign Trigger', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const createSession = async () => {
    const ctx = executeContext({ params: { resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'T.pdf', level: 'B-B', options: {} }, items: [pdfItem(await fixture('classic'))], credentials: env.credentials });
    const [[created]] = await new SingpassSign().execute.call(ctx);
    return { signRef: created.json.signRef as string, record: created.json.record as unknown as SessionRecord };
  };
  const create = async () => (await createSession()).signRef;
  /** The sandbox's attempts for one session's certificate notification, once it has its answer(s). */
  /** The service's attempts to deliver `signRef`'s certificate so far. */
  const certificateDeliveries = (signRef: string) => env.sb.sign.deliveries().filter((d) => d.signRef === signRef && d.requestType === 'user_cert');
  /** Waits (20 s at most) until `done` holds for those attempts; returns them. */
  const untilCertificateDeliveries = async (signRef: string, done: (attempts: ReturnType<typeof certificateDeliveries>) => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!done(certificateDeliveries(signRef)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return certificateDeliveries(signRef);
  };
  /** The certificate delivery's attempts once the service has ended it (acknowledged or given up). */
  const certificateAttempts = async (signRef: string) =>
    (await untilCertificateDeliveries(signRef, (a) => a.some((d) => d.outcome !== 'retry'))).map(({ status, outcome }) => ({ status, outcome }));

  describe('with the session store credential (a folder): the Bearer is bound to its session before the answer', () => {
    let dir: string;
    let store: FileSessionStore;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-trigger-records-'));
      store = new FileSessionStore(dir);
      env.credentials[STORE_CREDENTIAL] = { kind: 'folder', folder: dir, idleSeconds: 45 };
      env.triggerParams.sessionRecords = 'store';
    });
    afterAll(() => {
      env.triggerParams.sessionRecords = 'none';
      delete env.credentials[STORE_CREDENTIAL];
      env.rewriteHeaders = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    });
    afterEach(() => {
      env.rewriteHeaders = undefined;
    });

    /** A's certificate notification (genuine service JWT) presented with B's Bearer, a token this DSAP issued too. */
    const withTokenOf = (b: SessionRecord) => (headers: Record<string, string | string[] | undefined>) => ({ ...headers, authorization: `Bearer ${b.state.clientNotificationToken}` });

    it('its own session\'s token: 200 and the workflow starts', async () => {
      const a = await createSession();
      await store.save(a.record, undefined);
      const before = env.fired.length;
      await env.sb.phone.scan(a.signRef, { user: 'p256' });
      expect(await certificateAttempts(a.signRef)).toEqual([{ status: 200, outcome: 'acknowledged' }]);
      expect((await env.next(0)).json).toMatchObject({ type: 'certificate', signRef: a.signRef });
      expect(env.fired.length).toBe(before + 1);
      // kept in the folder before the 200, so List Due Sessions can replay it should this run be lost
      expect(await store.getDelivery(a.signRef, 'certificate')).toMatchObject({ type: 'certificate', applied: false });
    });

    it('another session\'s token: 400 at once (the service does not retry), no workflow; with records kept elsewhere (token check only) the same delivery was answered 200 and started one', async () => {
      const [a, b] = [await createSession(), await createSession()];
      await store.save(a.record, undefined);
      await store.save(b.record, undefined);
      const before = env.fired.length;
      env.rewriteHeaders = withTokenOf(b.record);
      await env.sb.phone.scan(a.signRef, { user: 'p256' });
      expect(await certificateAttempts(a.signRef)).toEqual([{ status: 400, outcome: 'failed' }]);
      expect(env.answers.at(-1)).toMatchObject({ status: 400, body: { error: 'INVALID_CLIENT_NOTIFICATION_TOKEN' } });
      expect(env.fired.length).toBe(before);

      // the stateless check (records kept elsewhere) only knows this DSAP issued the token: 200, a workflow that Prepare then refuses
      const [c, d] = [await createSession(), await createSession()];
      env.triggerParams.sessionRecords = 'none';
      try {
        env.rewriteHeaders = withTokenOf(d.record);
        await env.sb.phone.scan(c.signRef, { user: 'p256' });
        expect(await certificateAttempts(c.signRef)).toEqual([{ status: 200, outcome: 'acknowledged' }]);
        expect((await env.next(0)).json).toMatchObject({ type: 'certificate', signRef: c.signRef });
        expect(env.fired.length).toBe(before + 1);
      } finally {
        env.triggerParams.sessionRecords = 'store';
      }
    });

    it('an ended session: 400 (final), no workflow', async () => {
      const ended = await createSession();
      await store.save({ ...ended.record, phase: 'failed', state: { ...ended.record.state, status: 'failed' }, revision: ended.record.revision + 1 } as SessionRecord, undefined);
      const before = env.fired.length;
      await env.sb.phone.scan(ended.signRef, { user: 'p256' });
      expect(await certificateAttempts(ended.signRef)).toEqual([{ status: 400, outcome: 'failed' }]);
      expect(env.answers.at(-1)).toEqual({ status: 400, body: expect.objectContaining({ error: 'SIGN_REF_NOT_FOUND' }) });
      expect(env.fired.length).toBe(before);
    });

    it('the service\'s copy of an event the record already holds (the session ended by it): 200 (not the 400 of a new event for an ended session), no workflow', async () => {
      const a = await createSession();
      await store.save(a.record, undefined);
      let sent: { authorization?: string; body?: Buffer } = {};
      env.rewriteHeaders = (headers, rawBody) => {
        sent = { authorization: String(headers.authorization), body: rawBody };
        return headers;
      };
      await env.sb.phone.reject(a.signRef);
      const error = await env.next(2);
      env.rewriteHeaders = undefined;
      // the sample's step for it: Run Due Step records the error (the session fails)
      const [[failed]] = await new SingpassSign().execute.call(executeContext({
        params: { resource: 'sessionRecord', operation: 'runDueStep', signRef: a.signRef, delivery: error.json.delivery, outputBinaryPropertyName: 'data' },
        items: [error], credentials: env.credentials, typeVersion: 2,
      }));
      expect(failed.json).toMatchObject({ status: 'failed', ended: true });
      const before = env.fired.length;
      const again = await fetch(env.sb.sign.clients()[0].notificationUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: sent.authorization! }, body: new Uint8Array(sent.body!) });
      expect(again.status).toBe(200);
      expect(env.fired.length).toBe(before);
    });

    it('a session whose record is never saved: 503 on every attempt (the service retries, then gives up), no workflow', async () => {
      const unknown = await createSession(); // never saved
      const before = env.fired.length;
      await env.sb.phone.scan(unknown.signRef, { user: 'p256' });
      expect((await certificateAttempts(unknown.signRef)).map((a) => a.status)).toEqual([503, 503, 503]);
      expect(env.answers.at(-1)).toEqual({ status: 503, body: expect.objectContaining({ error: 'SERVER_SIDE_ERROR' }) });
      expect(env.fired.length).toBe(before);
      // the log names where the trigger looked and the credential that points it at the Session Record nodes' store
      expect(env.logs).toContainEqual(expect.stringMatching(new RegExp(`no session record for ${unknown.signRef} in the folder .* \\(Credential "Singpass Session Store"\\).*pick their Singpass Session Store credential on this trigger too \\(a folder is one host's: in queue mode set that credential's Kind to PostgreSQL\\)`)));
    });

    it('a scan that beats Save Record by more than the re-reads: 503, then 200 on the service\'s next attempt, one workflow', async () => {
      const late = await createSession();
      const before = env.fired.length;
      const scanning = env.sb.phone.scan(late.signRef, { user: 'p256' });
      const [first] = await untilCertificateDeliveries(late.signRef, (a) => a.some((d) => d.status !== undefined));
      expect(first?.status).toBe(503);
      await store.save(late.record, undefined); // Save Record (created), late
      expect(await scanning).toBe('acknowledged');
      expect((await certificateAttempts(late.signRef)).map((a) => a.status)).toEqual([503, 200]);
      expect((await env.next(0)).json).toMatchObject({ type: 'certificate', signRef: late.signRef });
      expect(env.fired.length).toBe(before + 1);
    });

    it('a record that cannot be read is our fault: 503 (the service retries), no workflow', async () => {
      const a = await createSession();
      fs.writeFileSync(path.join(dir, `${a.signRef}.json`), 'not json');
      const before = env.fired.length;
      await env.sb.phone.scan(a.signRef, { user: 'p256' });
      const attempts = await certificateAttempts(a.signRef);
      expect(attempts.map((x) => x.status)).toEqual([503, 503, 503]);
      expect(env.fired.length).toBe(before);
    });
  });

  describe('a store the trigger cannot read: 503 to every attempt (the service retries), and a log naming the credential field to fix', () => {
    beforeAll(() => {
      env.triggerParams.sessionRecords = 'store';
    });
    afterAll(async () => {
      env.triggerParams.sessionRecords = 'none';
      delete env.credentials[STORE_CREDENTIAL];
      await closePgRecordStores();
    });
    /** A saved-nowhere session scanned: the service's attempts, none handed to the workflow; the trigger's log since. */
    const scanned = async () => {
      const s = await createSession();
      const [before, logged] = [env.fired.length, env.logs.length];
      await env.sb.phone.scan(s.signRef, { user: 'p256' });
      const statuses = (await certificateAttempts(s.signRef)).map((a) => a.status);
      expect(env.fired.length).toBe(before);
      return { statuses, logs: env.logs.slice(logged) };
    };

    it('no store credential picked on the trigger: names the credential to pick', async () => {
      delete env.credentials[STORE_CREDENTIAL];
      const { statuses, logs } = await scanned();
      expect(statuses).toEqual([503, 503, 503]);
      expect(logs).toContainEqual(expect.stringMatching(/cannot check deliveries \(answered 503, the service retries\): INVALID_INPUT Credential "Singpass Session Store": .*pick the "Singpass Session Store" credential/));
    });

    it('a folder n8n does not allow (N8N_RESTRICT_FILE_ACCESS_TO): names the credential\'s Folder field', async () => {
      const allowed = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-trigger-allowed-'));
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-trigger-outside-'));
      const previous = process.env.N8N_RESTRICT_FILE_ACCESS_TO;
      process.env.N8N_RESTRICT_FILE_ACCESS_TO = allowed;
      env.credentials[STORE_CREDENTIAL] = { kind: 'folder', folder: outside };
      try {
        const { statuses, logs } = await scanned();
        expect(statuses).toEqual([503, 503, 503]);
        expect(logs).toContainEqual(expect.stringMatching(new RegExp(`INVALID_INPUT Credential "Singpass Session Store", field "Folder": n8n does not allow access to ${outside}`)));
      } finally {
        if (previous === undefined) delete process.env.N8N_RESTRICT_FILE_ACCESS_TO;
        else process.env.N8N_RESTRICT_FILE_ACCESS_TO = previous;
        fs.rmSync(allowed, { recursive: true, force: true });
        fs.rmSync(outside, { recursive: true, force: true });
      }
    });

    it('PostgreSQL that nothing answers at Host:Port: names the Host / Port fields', async () => {
      env.credentials[STORE_CREDENTIAL] = { kind: 'postgres', host: '127.0.0.1', port: await freePort(), database: 'nowhere', user: 'u', password: 'secret-pw' };
      const { statuses, logs } = await scanned();
      expect(statuses).toEqual([503, 503, 503]);
      expect(logs).toContainEqual(expect.stringMatching(/cannot read or keep in the PostgreSQL store .*Credential "Singpass Session Store", field "Host \/ Port": Session store \(PostgreSQL\) unreachable/));
      expect(logs.join('\n')).not.toContain('secret-pw');
    });

    it('a Kind this package does not know: names the Kind field', async () => {
      env.credentials[STORE_CREDENTIAL] = { kind: 's3' };
      const { statuses, logs } = await scanned();
      expect(statuses).toEqual([503, 503, 503]);
      expect(logs).toContainEqual(expect.stringMatching(/INVALID_INPUT Credential "Singpass Session Store", field "Kind": "s3" is not a kind/));
    });
  });

  describe('version 1 (workflows saved before the store credential): Session Records In and Session Record Folder still bind', () => {
    let dir: string;
    let store: FileSessionStore;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-trigger-v1-records-'));
      store = new FileSessionStore(dir);
      env.triggerVersion = 1;
      env.triggerParams.recordFolder = dir;
    });
    afterAll(() => {
      env.triggerVersion = 2;
      delete env.triggerParams.recordFolder;
      env.rewriteHeaders = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('its own session\'s token: 200 and the workflow starts; another session\'s token: 400, no workflow; an unsaved session: 503 with the version-1 hint', async () => {
      const [a, b] = [await createSession(), await createSession()];
      await store.save(a.record, undefined);
      await store.save(b.record, undefined);
      const before = env.fired.length;
      await env.sb.phone.scan(a.signRef, { user: 'p256' });
      expect(await certificateAttempts(a.signRef)).toEqual([{ status: 200, outcome: 'acknowledged' }]);
      expect((await env.next(0)).json).toMatchObject({ type: 'certificate', signRef: a.signRef });
      expect(env.fired.length).toBe(before + 1);

      const c = await createSession();
      await store.save(c.record, undefined);
      env.rewriteHeaders = (headers) => ({ ...headers, authorization: `Bearer ${b.record.state.clientNotificationToken}` });
      await env.sb.phone.scan(c.signRef, { user: 'p256' });
      expect(await certificateAttempts(c.signRef)).toEqual([{ status: 400, outcome: 'failed' }]);
      env.rewriteHeaders = undefined;
      expect(env.fired.length).toBe(before + 1);

      const unsaved = await createSession();
      await env.sb.phone.scan(unsaved.signRef, { user: 'p256' });
      expect((await certificateAttempts(unsaved.signRef)).map((x) => x.status)).toEqual([503, 503, 503]);
      expect(env.logs).toContainEqual(expect.stringMatching(new RegExp(`no session record for ${unsaved.signRef} in the folder .* \\(Session Records In\\).*set Session Records In to that same store`)));
    });

    it('Session Records In = PostgreSQL reads the version-1 PostgreSQL credential (named in its errors)', async () => {
      env.triggerParams.recordStore = 'postgres';
      env.credentials[PG_STORE_CREDENTIAL] = { host: '127.0.0.1', port: await freePort(), database: 'nowhere', user: 'u' };
      try {
        const s = await createSession();
        const logged = env.logs.length;
        await env.sb.phone.scan(s.signRef, { user: 'p256' });
        expect((await certificateAttempts(s.signRef)).map((x) => x.status)).toEqual([503, 503, 503]);
        expect(env.logs.slice(logged)).toContainEqual(expect.stringMatching(/Credential "Singpass Session Store \(PostgreSQL\)", field "Host \/ Port"/));
      } finally {
        delete env.triggerParams.recordStore;
        delete env.credentials[PG_STORE_CREDENTIAL];
        await closePgRecordStores();
      }
    });
  });

  it('a delivery sent twice (same token, after it was acknowledged) starts the workflow once; both get 200', async () => {
    env.sb.sign.faults.deliverTwice(true);
    try {
      const signRef = await create();
      const firedBefore = env.fired.length;
      await env.sb.phone.scan(signRef, { user: 'p256' });
      const cert = await env.next(0);
      expect(cert.json).toMatchObject({ type: 'certificate', signRef, delivery: { event: { type: 'certificate', signRef } } });
      // wait until the sandbox has sent the copy and had its answer
      const copies = await untilCertificateDeliveries(signRef, (a) => a.filter((d) => d.status !== undefined).length >= 2);
      expect(copies.map((d) => ({ duplicate: d.duplicate, status: d.status }))).toEqual([{ duplicate: false, status: 200 }, { duplicate: true, status: 200 }]);
      expect(env.fired.length - firedBefore).toBe(1);
    } finally {
      env.sb.sign.faults.deliverTwice(false);
    }
  });

  it('an error event (the user rejected) leaves on the Error output only, with the service\'s code and ours beside it', async () => {
    const signRef = await create();
    await env.sb.phone.reject(signRef);
    const err = await env.next(2);
    const serviceCode = (err.json.error as { code: string }).code;
    expect(serviceCode).toMatch(/\S/);
    // `code` stays the service's (workflows branch on it); `sessionError` is what the record gets once the event is applied
    expect(err.json).toMatchObject({
      type: 'error', signRef, error: { code: serviceCode, serviceCode },
      sessionError: { code: 'SIGN_REQUEST_REJECTED', serviceCode, message: expect.stringContaining(serviceCode) },
    });
    const run = env.fired.find((outputs) => outputs[2].some((i) => i.json.signRef === signRef))!;
    expect([run[0].length, run[1].length, run[2].length]).toEqual([0, 0, 1]);
  });

  describe('what the certificate event says of the signer (records kept elsewhere)', () => {
    afterEach(() => {
      delete env.triggerParams.signerId;
      delete env.triggerParams.certificateInOutput;
      env.triggerVersion = 2;
    });
    const certificateItem = async () => {
      const signRef = await create();
      await env.sb.phone.scan(signRef, { user: 'p256' });
      return (await env.next(0)).json;
    };
    const user = () => env.sb.pki.users.p256;
    const nric = () => /serialNumber=(\S+)/.exec(user().subject)![1];

    it('by default (version 2): the signer\'s name, no ID; the certificate for the Signing Session steps', async () => {
      const item = await certificateItem();
      expect(item.signer).toEqual({ name: 'TAN AH KOW' });
      expect(JSON.stringify(item.signer)).not.toContain(nric());
      expect((item.delivery as { event: { certificate: { base64: string } } }).event.certificate.base64).toBe(user().certDer.toString('base64'));
    });

    it('Signer\'s ID in Output "masked": the NRIC with all but its last four characters masked, never in full', async () => {
      env.triggerParams.signerId = 'masked';
      const item = await certificateItem();
      expect(item.signer).toEqual({ name: 'TAN AH KOW', maskedId: `*****${nric().slice(-4)}` });
    });

    it('Certificate in Output "leave out": no certificate and no NRIC anywhere in the item, the name and sign_ref still there', async () => {
      env.triggerParams.certificateInOutput = 'leaveOut';
      env.triggerParams.signerId = 'masked';
      const item = await certificateItem();
      const text = JSON.stringify(item);
      expect(text).not.toContain(user().certDer.toString('base64').slice(40, 120));
      expect(text).not.toContain(nric());
      expect(item).toMatchObject({ type: 'certificate', signRef: expect.any(String), signer: { name: 'TAN AH KOW', maskedId: expect.stringMatching(/^\*{5}/) } });
    });
    describe('Certificate in Output left at its default (not saved in the workflow): per node version', () => {
      const certificateOf = (item: Record<string, unknown>) => (item.delivery as { event: { certificate: { base64?: string; subject?: string } } }).event.certificate;
      /** The trigger's parameters as n8n loads a workflow that saved only Session Records "Elsewhere". */
      const loadedAt = (version: number) => {
        const params = asN8nLoads(new SingpassSignTrigger().description, version, { path: 'singpass-sign', sessionRecords: 'none' });
        env.triggerVersion = version;
        if (params.certificateInOutput === undefined) delete env.triggerParams.certificateInOutput;
        else env.triggerParams.certificateInOutput = params.certificateInOutput;
        return params;
      };

      it('version 3 (new nodes): the certificate is left out — no certificate, no subject, no NRIC in the item', async () => {
        expect(loadedAt(3)).toMatchObject({ sessionRecords: 'none', certificateInOutput: 'leaveOut' });
        const item = await certificateItem();
        const text = JSON.stringify(item);
        expect(text).not.toContain(user().certDer.toString('base64').slice(40, 120));
        expect(text).not.toContain(nric());
        // redacted as a kept delivery's is: every field empty
        expect(certificateOf(item)).toMatchObject({ base64: '', subject: '' });
        expect(item).toMatchObject({ type: 'certificate', signRef: expect.any(String), signer: { name: 'TAN AH KOW' } });
      });

      it('version 3 given no value at all (the code\'s own fallback): left out too', async () => {
        env.triggerVersion = 3;
        const item = await certificateItem();
        expect(JSON.stringify(item)).not.toContain(nric());
        expect(certificateOf(item)).toMatchObject({ base64: '', subject: '' });
      });

      it('version 2 (saved workflows): still included, as the workflow was built for', async () => {
        expect(loadedAt(2)).toMatchObject({ sessionRecords: 'none', certificateInOutput: 'include' });
        const item = await certificateItem();
        expect(certificateOf(item)).toMatchObject({ base64: user().certDer.toString('base64'), subject: expect.stringContaining(nric()) });
      });

      it('version 3 with Include chosen: the certificate is in the item', async () => {
        env.triggerVersion = 3;
        env.triggerParams.certificateInOutput = 'include';
        const item = await certificateItem();
        expect(certificateOf(item)).toMatchObject({ base64: user().certDer.toString('base64'), subject: expect.stringContaining(nric()) });
      });
    });
  });

  it('a Bearer this DSAP never issued is answered 400 and does not start the workflow', async () => {
    const before = env.fired.length;
    const res = await fetch(env.sb.sign.clients()[0].notificationUrl, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sfn1_0123456789abcdef0123456789abcdef_forged' }, body: JSON.stringify({ token: 'x.y.z' }),
    });
    expect(res.status).toBe(400);
    expect(env.fired.length).toBe(before);
  });

  it('a broken credential is our fault: 503 (the service retries), logged, no crash and no workflow', async () => {
    const ctx = mockDeep<IWebhookFunctions>();
    ctx.getNode.mockReturnValue(testNode);
    ctx.getRequestObject.mockReturnValue({ headers: { authorization: 'Bearer x' }, rawBody: Buffer.from('{}') } as never);
    ctx.getCredentials.mockImplementation(async (name: string) => (name === 'singpassSignApi' ? { ...env.credentials.singpassSignApi, signingKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' } : env.credentials[name]));
    const answer: { status?: number; body?: unknown } = {};
    const response = { status: (s: number) => ((answer.status = s), response), json: (b: unknown) => ((answer.body = b), response), end: () => response };
    ctx.getResponseObject.mockReturnValue(response as never);
    const out = await new SingpassSignTrigger().webhook.call(ctx);
    expect(answer).toMatchObject({ status: 503, body: { error: 'SERVER_SIDE_ERROR', error_description: 'Temporary failure at the DSAP; please retry', ndi_request_id: expect.any(String) } });
    expect(out).toEqual({ noWebhookResponse: true });
    expect(ctx.logger.error).toHaveBeenCalledWith(expect.stringMatching(/cannot check deliveries/));
    expect(JSON.stringify(answer.body)).not.toMatch(/not a key|PRIVATE/);
  });
});

describe('Singpass Sign Trigger versions, as n8n loads a saved node', () => {
  const d = new SingpassSignTrigger().description;

  it('is version 3 by default; 2 and 3 bind to the store credential, 1 to its own Session Records In', () => {
    expect(d).toMatchObject({ version: [1, 2, 3], defaultVersion: 3 });
    expect(d.credentials!.find((c) => c.name === STORE_CREDENTIAL)!.displayOptions).toEqual({ show: { sessionRecords: ['store'], '@version': [2, 3] } });
    const loaded = [1, 2, 3].map((v) => asN8nLoads(d, v, { path: 'singpass-sign' }));
    expect(loaded.map((p) => [p.sessionRecords, p.recordStore, p.certificateInOutput])).toEqual([[undefined, 'folder', undefined], ['store', undefined, undefined], ['store', undefined, undefined]]);
  });

  it('Certificate in Output (records kept elsewhere): Include by default at version 2, Leave Out at 3, and the Include option says it puts the NRIC in the execution data', () => {
    const elsewhere = (v: number, saved: Record<string, string> = {}) => asN8nLoads(d, v, { path: 'singpass-sign', sessionRecords: 'none', ...saved }).certificateInOutput;
    expect([elsewhere(2), elsewhere(3)]).toEqual(['include', 'leaveOut']);
    expect([elsewhere(2, { certificateInOutput: 'leaveOut' }), elsewhere(3, { certificateInOutput: 'include' })]).toEqual(['leaveOut', 'include']);
    // but for its default, version 3 sees the same parameters as version 2
    const { certificateInOutput: _2, ...v2 } = asN8nLoads(d, 2, { path: 'singpass-sign', sessionRecords: 'none' });
    const { certificateInOutput: _3, ...v3 } = asN8nLoads(d, 3, { path: 'singpass-sign', sessionRecords: 'none' });
    expect(v3).toEqual(v2);
    for (const p of d.properties.filter((x) => x.name === 'certificateInOutput')) {
      expect(p.options!.find((o) => 'value' in o && o.value === 'include')!.name).toMatch(/NRIC.*Execution Data/i);
    }
  });
});
