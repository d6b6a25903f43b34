/**
 * The Singpass Sign node's Run Due Step (Session Record resource): the core's one driver (`runDueStep`) on the node's
 * store, against the sandbox over real HTTP — a folder store (the hash resent from the save point, the signature
 * finished into the signed PDF, expiry, a missing PDF as an error item) and a real PostgreSQL (the kept events List
 * Due Sessions hands back for replay applied and driven on, and marked applied by the save that moved them on).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { closePgRecordStores, STORE_CREDENTIAL } from '../../../nodes/shared/record-store';
import { FileSessionStore, PgSessionStore, type SessionRecord } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { postgresDatabase, type Postgres } from '../../helpers/postgres';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/** One user signature in a PDF qpdf finds sound (pdfsig's count). */
function userSignatures(pdf: Buffer): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-run-due-'));
  try {
    fs.writeFileSync(path.join(dir, 'signed.pdf'), pdf);
    execFileSync('qpdf', ['--check', path.join(dir, 'signed.pdf')]);
    return execFileSync('pdfsig', [path.join(dir, 'signed.pdf')]).toString().split(/^Signature #\d+:$/m).slice(1).filter((p) => /ETSI\.CAdES\.detached/.test(p)).length;
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
}

describe('Singpass Sign node: Run Due Step', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials, typeVersion: 2 }));

  describe('on a folder store', () => {
    let dir: string;
    let store: FileSessionStore;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-run-due-records-'));
      store = new FileSessionStore(dir);
      // idle 0: a record at a save point is due at once (no waiting in the test)
      env.credentials[STORE_CREDENTIAL] = { kind: 'folder', folder: dir, idleSeconds: 0 };
      env.triggerParams.sessionRecords = 'store';
    });
    afterAll(() => {
      env.triggerParams.sessionRecords = 'none';
      delete env.credentials[STORE_CREDENTIAL];
      fs.rmSync(dir, { recursive: true, force: true });
    });
    /** The sample's parameters: signRef and delivery from the (first) item unless given. */
    const runDue = (params: Record<string, unknown> = {}, items?: INodeExecutionData[]) =>
      run({ resource: 'sessionRecord', operation: 'runDueStep', outputBinaryPropertyName: 'data', signRef: items?.[0].json.signRef, delivery: items?.[0].json.delivery ?? '', ...params }, items);
    const record = (r: unknown) => JSON.parse(JSON.stringify(r)) as IDataObject;

    it('at the save point (Submit never ran): resends the SAME hash and saves hash_submitted; signed: finishes, stores and hands over the signed PDF (leased: not again), acknowledged: completed', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'R.pdf', level: 'B-T', options: {} }, [pdfItem(pdf)]);
      const signRef = created.json.signRef as string;
      await run({ resource: 'sessionRecord', operation: 'saveRecord', record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
      await env.sb.phone.scan(signRef, { user: 'p256' });
      const cert = await env.next(0);
      // the store-bound trigger's item carries no certificate: Prepare (Session Record) loads it from the store
      expect(JSON.stringify(cert.json)).not.toContain(env.sb.pki.users.p256.certDer.toString('base64'));
      const [[prepared]] = await run({ resource: 'sessionRecord', operation: 'prepareStoredSignature' }, [cert]);
      expect(prepared.json).toMatchObject({ prepared: true });

      // the run that would have submitted died: the schedule's item (List Due) → Run Due Step
      const [due] = await run({ resource: 'sessionRecord', operation: 'listDue' });
      const item = due.find((d) => d.json.signRef === signRef)!;
      expect(item.json.action).toBe('submitHash');
      // both nodes judge "due" by the store credential's idle time: the item carries none of its own
      expect(item.json.idleSeconds).toBeUndefined();
      const [[submitted]] = await runDue({ signRef, delivery: '' }, [item]);
      expect(submitted.json).toMatchObject({ action: 'submitHash', lost: false, ended: false, signRef, status: 'hash_submitted' });
      expect(submitted.binary).toBeUndefined();
      expect((await store.get(signRef))!.state.status).toBe('hash_submitted');
      expect(env.sb.sign.session(signRef)?.docHash).toBe((prepared.json.record as { submitting: { documentHash: string } }).submitting.documentHash);

      await env.sb.phone.approve(signRef);
      const sig = await env.next(1);
      const stored = await store.get(signRef);
      const [[applied]] = await run({ resource: 'session', operation: 'applyEvent', record: record(stored), delivery: sig.json.delivery, binaryPropertyName: 'data' });
      await run({ resource: 'sessionRecord', operation: 'saveRecord', record: applied.json.record, saveAs: 'update', expectedRevision: stored!.revision, pdfBinaryField: '' });

      const [[finished]] = await runDue({ signRef });
      // finished to the level asked for and handed over: the PDF and what the storage needs, no record (no personal data)
      expect(finished.json).toEqual({ action: 'finish', lost: false, ended: false, handOver: true, signRef, attempt: 1, fileName: `R-signed-${signRef}.pdf`, status: 'completed', phase: 'handingOver', revision: expect.any(Number), result: { level: 'B-T', valid: true } });
      expect(finished.binary!.data.fileName).toBe(`R-signed-${signRef}.pdf`);
      const signed = binaryBuffer(finished.binary!.data);
      expect(userSignatures(signed)).toBe(1);
      expect(fs.readFileSync(path.join(dir, `${signRef}-signed.pdf`))).toEqual(signed); // stored before the record said finished
      expect((await store.get(signRef))!.phase).toBe('handingOver');

      const [[again]] = await runDue({ signRef });
      expect(again.json).toMatchObject({ action: 'none', ended: false, status: 'completed', phase: 'handingOver' }); // leased: not handed over twice
      expect(again.binary).toBeUndefined();
      // the workflow's storage wrote it: acknowledged, the session ends completed; twice is harmless
      const [[acked]] = await run({ resource: 'sessionRecord', operation: 'acknowledgeStoredPdf', signRef }, [finished]);
      expect(acked.json).toEqual({ signRef, acknowledged: true, found: true, status: 'completed', phase: 'completed', attempts: 1 });
      const [[twice]] = await run({ resource: 'sessionRecord', operation: 'acknowledgeStoredPdf', signRef }, [finished]);
      expect(twice.json).toMatchObject({ acknowledged: false, phase: 'completed' });
      expect((await store.get(signRef))!.handOver!.acknowledgedAt).toEqual(expect.any(Number));
      expect(again.binary).toBeUndefined();
    });

    it('the trigger\'s signature event given with the item (the sample\'s signature branch): saved as signed, then finished; the service\'s copy of it changes nothing and is not recorded twice', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'S.pdf', level: 'B-T', options: {} }, [pdfItem(pdf)]);
      const signRef = created.json.signRef as string;
      await store.save(created.json.record as unknown as SessionRecord, undefined, { document: pdf });
      await env.sb.phone.scan(signRef, { user: 'p256' });
      const cert = await env.next(0);
      const [[prepared]] = await run({ resource: 'sessionRecord', operation: 'prepareStoredSignature' }, [cert]);
      const [[submitted]] = await run({ resource: 'sessionRecord', operation: 'submitStoredHash' }, [prepared]);
      expect(submitted.json).toMatchObject({ status: 'hash_submitted' });
      await env.sb.phone.approve(signRef);
      const sig = await env.next(1);

      const [[finished]] = await runDue({}, [sig]); // signRef and delivery from the trigger's item
      expect(finished.json).toMatchObject({ event: 'signature', action: 'finish', ended: false, handOver: true, attempt: 1, status: 'completed', result: { level: 'B-T', valid: true } });
      expect(userSignatures(binaryBuffer(finished.binary!.data))).toBe(1);
      const [[copy]] = await runDue({}, [sig]);
      expect(copy.json).toMatchObject({ event: 'signature', action: 'none', ended: false, status: 'completed' });
      expect(copy.binary).toBeUndefined();
    });

    it('the hand-over: not acknowledged within the lease, List Due hands it over again (same bytes and name); a storage failure reported is kept and handed over after a backoff; past the window: undelivered', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'H.pdf', level: 'B-T', options: {} }, [pdfItem(pdf)]);
      const signRef = created.json.signRef as string;
      await store.save(created.json.record as unknown as SessionRecord, undefined, { document: pdf });
      await env.sb.phone.scan(signRef, { user: 'p256' });
      const [[prepared]] = await run({ resource: 'sessionRecord', operation: 'prepareStoredSignature' }, [await env.next(0)]);
      await run({ resource: 'sessionRecord', operation: 'submitStoredHash' }, [prepared]);
      await env.sb.phone.approve(signRef);
      const policy = { handOverLeaseSeconds: 1, handOverWindowSeconds: 6 };
      const [[first]] = await runDue(policy, [await env.next(1)]);
      expect(first.json).toMatchObject({ handOver: true, attempt: 1 });

      await new Promise((r) => setTimeout(r, 1100)); // the lease passes: the storage never acknowledged it
      const [due] = await run({ resource: 'sessionRecord', operation: 'listDue' });
      const item = due.find((d) => d.json.signRef === signRef)!;
      expect(item.json.action).toBe('handOver');
      const [[second]] = await runDue({ ...policy, sessionFrom: 'item' }, [item]);
      expect(second.json).toMatchObject({ action: 'handOver', handOver: true, attempt: 2, fileName: first.json.fileName, phase: 'handingOver' });
      expect(second.json.record).toBeUndefined();
      expect(binaryBuffer(second.binary!.data)).toEqual(binaryBuffer(first.binary!.data));

      // the storage node's error output: the input item and its error
      const [[reported]] = await run({ resource: 'sessionRecord', operation: 'reportStorageFailure', signRef, storageError: 'connect ECONNREFUSED 127.0.0.1:22' }, [{ json: { ...second.json, error: 'connect ECONNREFUSED 127.0.0.1:22' } }]);
      expect(reported.json).toMatchObject({ signRef, reported: true, phase: 'handingOver', attempts: 2, lastFailure: { code: 'HANDOVER_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:22' }, nextHandOverAt: expect.any(String) });
      expect((await store.get(signRef))!.handOver!.lastFailure).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:22' });

      await new Promise((r) => setTimeout(r, 6000)); // the window closes
      const [[gaveUp]] = await runDue({ ...policy, signRef });
      expect(gaveUp.json).toMatchObject({ action: 'handOver', ended: true, status: 'completed', phase: 'undelivered' });
      expect(gaveUp.binary).toBeUndefined();
      expect((await store.get(signRef))!.handOver!.undelivered).toMatchObject({ code: 'HANDOVER_UNACKNOWLEDGED' });
      // the PDF stays in the store; a late acknowledgement still completes the session
      expect(await store.getSignedDocument(signRef)).toEqual(binaryBuffer(first.binary!.data));
      const [[late]] = await run({ resource: 'sessionRecord', operation: 'acknowledgeStoredPdf', signRef });
      expect(late.json).toMatchObject({ acknowledged: true, phase: 'completed' });
    }, 30_000);

    const nowS = () => Math.floor(Date.now() / 1000);
    function handMade(signRef: string, status: string, patch: Partial<SessionRecord['state']>, extra: Partial<SessionRecord> = {}): SessionRecord {
      return {
        format: 'singpass-flows/signing-session@1',
        state: { version: 1, signRef, status, expiresAt: nowS() + 300, challengeCode: 'ABCD', clientNotificationToken: 't', updatedAt: nowS(), ...patch },
        request: { documentName: 'a.pdf', level: 'B-T' }, document: { length: 4, sha256: '00' }, revision: 1, ...extra,
      } as unknown as SessionRecord;
    }

    it('past its deadline: expired (SESSION_EXPIRED) and saved, and the ended session goes out for the workflow to record', async () => {
      await store.save(handMade('late-1', 'waiting_for_scan', { expiresAt: nowS() - 600, updatedAt: nowS() - 600 }), undefined);
      const [[out]] = await runDue({ signRef: 'late-1' });
      expect(out.json).toMatchObject({ action: 'expire', lost: false, ended: true, status: 'expired', error: { code: 'SESSION_EXPIRED' }, revision: 2 });
      expect((await store.get('late-1'))!.state.status).toBe('expired');
    });

    it('a step that needs the PDF when the store has none: an error item naming what is missing, the record untouched; an unknown signRef: found: false', async () => {
      await store.save(handMade('nopdf-1', 'signed', { updatedAt: nowS() - 600 }, { prepared: {}, submitting: { documentHash: 'ab' } } as Partial<SessionRecord>), undefined);
      const [[out]] = await runDue({ signRef: 'nopdf-1' });
      expect(out.json).toMatchObject({ action: 'finish', documentMissing: true, status: 'signed', error: { code: 'STATE_INVALID', message: expect.stringMatching(/nopdf-1.*its PDF is not/) } });
      expect((await store.get('nopdf-1'))!.revision).toBe(1);
      const [[missing]] = await runDue({ signRef: 'gone-1' });
      expect(missing.json).toEqual({ signRef: 'gone-1', action: 'none', found: false });
    });
  });

  describe('on the PostgreSQL store: the kept events List Due Sessions hands back', () => {
    let pg: Postgres;
    let store: PgSessionStore;
    beforeAll(async () => {
      pg = await postgresDatabase();
      // idle 0: a kept event nothing applied is due for replay at once (no waiting in the test)
      env.credentials[STORE_CREDENTIAL] = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.database, user: pg.user, password: pg.password, idleSeconds: 0 };
      env.triggerParams.sessionRecords = 'store';
      store = new PgSessionStore(pg.url, { idleMs: 0 });
    }, 120_000);
    afterAll(async () => {
      env.triggerParams.sessionRecords = 'none';
      delete env.credentials[STORE_CREDENTIAL];
      await closePgRecordStores();
      await store?.close();
      await pg?.stop();
    });
    const replayOf = async (signRef: string, action: string) => {
      const [items] = await run({ resource: 'sessionRecord', operation: 'listDue' });
      const item = items.find((i) => i.json.signRef === signRef && i.json.action === action);
      if (!item) throw new Error(`no ${action} for ${signRef} in ${JSON.stringify(items.map((i) => [i.json.signRef, i.json.action]))}`);
      return item;
    };
    /** The item straight on (the sample's expressions: signRef and delivery from the item). */
    const runDue = (item: INodeExecutionData, params: Record<string, unknown> = {}) =>
      run({ resource: 'sessionRecord', operation: 'runDueStep', signRef: item.json.signRef, delivery: item.json.delivery ?? '', outputBinaryPropertyName: 'data', ...params }, [item]);

    it('replayCertificate → claimed, checked, prepared, hash sent; replaySignature → finished and handed over; the kept certificate marked applied, every kept event gone once signing is over; unacknowledged, listed for a hand-over again', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'P.pdf', level: 'B-B', options: {} }, [pdfItem(pdf)]);
      const signRef = created.json.signRef as string;
      await run({ resource: 'sessionRecord', operation: 'saveRecord', record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);

      await env.sb.phone.scan(signRef, { user: 'p256' });
      await env.next(0); // the run n8n started after the answer: lost, nothing applies it
      const [[submitted]] = await runDue(await replayOf(signRef, 'replayCertificate'));
      expect(submitted.json).toMatchObject({ event: 'certificate', lost: false, signRef, status: 'hash_submitted' });
      expect(env.sb.sign.session(signRef)?.docHash).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.getDelivery(signRef, 'certificate')).toMatchObject({ applied: true });

      await env.sb.phone.approve(signRef);
      await env.next(1);
      const [[finished]] = await runDue(await replayOf(signRef, 'replaySignature'), { handOverLeaseSeconds: 1 });
      expect(finished.json).toMatchObject({ event: 'signature', action: 'finish', handOver: true, attempt: 1, status: 'completed', phase: 'handingOver', result: { level: 'B-B', valid: true } });
      const signed = binaryBuffer(finished.binary!.data);
      expect(userSignatures(signed)).toBe(1);
      expect(await store.getSignedDocument(signRef)).toEqual(signed);
      // signing is over: the kept events leave the store (the certificate's carried the user's certificate); none is replayed
      expect(await store.getDelivery(signRef, 'signature')).toBeUndefined();
      expect(await store.getDelivery(signRef, 'certificate')).toBeUndefined();
      // not acknowledged within its lease: the PostgreSQL store lists it for a hand-over again (the same bytes)
      await new Promise((r) => setTimeout(r, 1100));
      const again = await replayOf(signRef, 'handOver');
      const [[second]] = await runDue(again);
      expect(second.json).toMatchObject({ action: 'handOver', handOver: true, attempt: 2 });
      expect(binaryBuffer(second.binary!.data)).toEqual(signed);
      const [[acked]] = await run({ resource: 'sessionRecord', operation: 'acknowledgeStoredPdf', signRef }, [second]);
      expect(acked.json).toMatchObject({ acknowledged: true, phase: 'completed', attempts: 2 });
      expect((await run({ resource: 'sessionRecord', operation: 'listDue' }))[0].filter((i) => i.json.signRef === signRef)).toEqual([]);
    });

    it('a kept error event: the session fails with the service\'s reason and goes out for the workflow to record; its kept events leave the store', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'E.pdf', level: 'B-B', options: {} }, [pdfItem(pdf)]);
      const signRef = created.json.signRef as string;
      await run({ resource: 'sessionRecord', operation: 'saveRecord', record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
      await env.sb.phone.scan(signRef, { user: 'p256' });
      await env.next(0);
      await runDue(await replayOf(signRef, 'replayCertificate'));
      await env.sb.phone.reject(signRef);
      await env.next(2);
      const [[failed]] = await runDue(await replayOf(signRef, 'replayError'));
      expect(failed.json).toMatchObject({ event: 'error', ended: true, status: 'failed', error: { code: expect.any(String) } });
      expect((await store.get(signRef))!.state.status).toBe('failed');
      expect(await store.getDelivery(signRef, 'error')).toBeUndefined();
      expect(await store.getDelivery(signRef, 'certificate')).toBeUndefined();
      expect((await run({ resource: 'sessionRecord', operation: 'listDue' }))[0].filter((i) => i.json.signRef === signRef)).toEqual([]);
    });
  });
});
