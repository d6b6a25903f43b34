/**
 * The Singpass Sign node VERSION 2 (the default): every Session Record operation keeps sessions in the store of ONE
 * "Singpass Session Store" credential (Kind Folder or PostgreSQL) instead of per-node parameters. Shown here: the
 * operations on a folder credential (n8n's file-access check included), the same records read by a version-1 node's
 * Folder parameter (an old workflow next to a new one), a real PostgreSQL credential, and every wrong setting
 * answered with a stable code and the credential field to fix.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ICredentialDataDecryptedObject, INodeExecutionData } from 'n8n-workflow';
import { SingpassSessionStoreApi } from '../../../credentials/SingpassSessionStoreApi.credentials';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { operations } from '../../../nodes/SingpassSign/actions/router';
import { testSessionStore } from '../../../nodes/shared/credential-tests';
import { closePgRecordStores, STORE_CREDENTIAL } from '../../../nodes/shared/record-store';
import { SESSION_POLICY, type SessionRecord } from '../../../src/session';
import { freePort } from '../../helpers/ports';
import { postgresDatabase, type Postgres } from '../../helpers/postgres';
import { asN8nLoads, binaryBuffer, executeContext, pdfItem } from '../context';

const nowS = () => Math.floor(Date.now() / 1000);
function record(signRef: string, revision: number, status = 'waiting_for_scan', patch: Partial<SessionRecord['state']> = {}, savePoint = false): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1',
    state: { version: 1, signRef, status, expiresAt: nowS() + 300, challengeCode: 'ABCD', clientNotificationToken: 't', updatedAt: nowS(), ...patch },
    request: { documentName: 'a.pdf', level: 'B-T' }, document: { length: 4, sha256: '00' },
    ...(savePoint ? { prepared: {}, submitting: { documentHash: 'ab' } } : {}),
    revision,
  } as unknown as SessionRecord;
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-store-cred-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
afterAll(() => closePgRecordStores());

function run(credential: ICredentialDataDecryptedObject | undefined, params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }], setup?: (ctx: ReturnType<typeof executeContext>) => void) {
  const ctx = executeContext({ params: { resource: 'sessionRecord', ...params }, items, credentials: credential ? { [STORE_CREDENTIAL]: credential } : {}, typeVersion: 2 });
  setup?.(ctx);
  return new SingpassSign().execute.call(ctx);
}

describe('Singpass Sign node version 2: Session Record on the store credential', () => {
  it('Save (new, with the PDF) → Load → List Due (the credential\'s idle time) → Clean Up, all on the credential\'s folder; no Store or Folder parameter read', async () => {
    const store = { kind: 'folder', folder: dir, idleSeconds: 30 };
    const pdf = Buffer.from('%PDF-1.7 sample');
    const t = nowS();
    const [[created]] = await run(store, { operation: 'saveRecord', record: record('s1', 1), saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
    expect(created.json).toEqual({ saved: true, outcome: 'saved', signRef: 's1', status: 'waiting_for_scan', revision: 1 });
    expect(fs.readdirSync(dir).sort()).toEqual(['s1.json', 's1.pdf']);
    const [[loaded]] = await run(store, { operation: 'loadRecord', signRef: 's1', pdfBinaryField: 'data', ifMissing: 'output' });
    expect(loaded.json).toMatchObject({ found: true, revision: 1, signRef: 's1' });
    expect(binaryBuffer(loaded.binary!.data)).toEqual(pdf);

    // idle 40 s and 20 s at the save point: only the first is past the credential's 30 s
    await run(store, { operation: 'saveRecord', record: record('idle', 1, 'certificate_received', { updatedAt: t - 40, scannedAt: t - 40 }, true), saveAs: 'new' });
    await run(store, { operation: 'saveRecord', record: record('busy', 1, 'certificate_received', { updatedAt: t - 20, scannedAt: t - 20 }, true), saveAs: 'new' });
    const [due] = await run(store, { operation: 'listDue' }, undefined, (ctx) => {
      ctx.getNodeParameter.mockImplementation(((name: string, _i: number, fallback?: unknown) => {
        if (['store', 'folder', 'idleSeconds'].includes(name)) throw new Error(`version 2 read the version-1 parameter ${name}`);
        return ({ resource: 'sessionRecord', operation: 'listDue' } as Record<string, unknown>)[name] ?? fallback;
      }) as never);
    });
    expect(due.map((d) => [d.json.signRef, d.json.action])).toEqual([['idle', 'submitHash']]);
    expect(due[0].json.idleSeconds).toBeUndefined();

    await run(store, { operation: 'saveRecord', record: record('done', 1, 'completed', { updatedAt: t - 3 * 86_400 }), saveAs: 'new' });
    const [[cleaned]] = await run(store, { operation: 'cleanUp', retentionDays: 2 });
    expect(cleaned.json).toMatchObject({ deletedSessions: 1, deleted: ['done'] });
  });

  it('List Due with Delete Ended Sessions deletes ended sessions past the credential\'s Keep Ended Sessions (Days); off (a workflow saved before it), and on version 1, it deletes nothing', async () => {
    const t = nowS();
    const save = (store: ICredentialDataDecryptedObject, ref: string, age: number) => run(store, { operation: 'saveRecord', record: record(ref, 1, 'completed', { updatedAt: t - age * 86_400 }), saveAs: 'new' });
    const kept = () => fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
    const store = { kind: 'folder', folder: dir, retentionDays: 2 };
    await save(store, 'three-days', 3);
    await save(store, 'one-day', 1);
    // the option off: nothing goes, whatever the credential says
    expect(await run(store, { operation: 'listDue' })).toEqual([[]]);
    expect(kept()).toEqual(['one-day.json', 'three-days.json']);
    // version 1 has no such option (its store has no retention)
    const v1 = executeContext({ params: { resource: 'sessionRecord', operation: 'listDue', store: 'folder', folder: dir, idleSeconds: 45, deleteEnded: true }, typeVersion: 1 });
    await new SingpassSign().execute.call(v1);
    expect(kept()).toEqual(['one-day.json', 'three-days.json']);
    // on: the credential's 2 days; no item for a deleted session (the items are what to resume)
    expect(await run(store, { operation: 'listDue', deleteEnded: true })).toEqual([[]]);
    expect(kept()).toEqual(['one-day.json']);
    // the credential without the field: the policy's 7 days
    await save(store, 'eight-days', 8);
    await run({ kind: 'folder', folder: dir }, { operation: 'listDue', deleteEnded: true });
    expect(kept()).toEqual(['one-day.json']);
    await expect(run({ ...store, retentionDays: -1 }, { operation: 'listDue', deleteEnded: true })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Keep Ended Sessions (Days)' } });
  });

  it('a version-1 node\'s Folder parameter and a version-2 node\'s folder credential on the same folder see the same records (old and new workflows side by side)', async () => {
    await run({ kind: 'folder', folder: dir }, { operation: 'saveRecord', record: record('shared', 1), saveAs: 'new' });
    const v1 = executeContext({ params: { resource: 'sessionRecord', operation: 'loadRecord', store: 'folder', folder: dir, signRef: 'shared', ifMissing: 'error' }, typeVersion: 1 });
    const [[loaded]] = await new SingpassSign().execute.call(v1);
    expect(loaded.json).toMatchObject({ found: true, signRef: 'shared', revision: 1 });
    const [[updated]] = await new SingpassSign().execute.call(executeContext({ params: { resource: 'sessionRecord', operation: 'saveRecord', store: 'folder', folder: dir, record: record('shared', 2, 'expired'), saveAs: 'update', expectedRevision: 1 }, typeVersion: 1 }));
    expect(updated.json).toMatchObject({ saved: true, revision: 2 });
    const [[again]] = await run({ kind: 'folder', folder: dir }, { operation: 'loadRecord', signRef: 'shared', ifMissing: 'error' });
    expect(again.json).toMatchObject({ status: 'expired', revision: 2 });
  });

  it('every wrong setting is INVALID_INPUT naming the credential (with the name the user gave it) and the field; nothing is written', async () => {
    const named = (ctx: ReturnType<typeof executeContext>) => ctx.getNode.mockReturnValue({ id: 'n1', name: 'Save', type: 't', typeVersion: 2, position: [0, 0], parameters: {}, credentials: { [STORE_CREDENTIAL]: { id: null, name: 'Sessions on this host' } } });
    const save = (credential: ICredentialDataDecryptedObject | undefined, setup?: (ctx: ReturnType<typeof executeContext>) => void) =>
      run(credential, { operation: 'saveRecord', record: record('x', 1), saveAs: 'new' }, undefined, (ctx) => { named(ctx); setup?.(ctx); });
    const blocked = path.join(dir, 'blocked');
    await expect(save({ kind: 'folder', folder: blocked }, (ctx) => ctx.helpers.isFilePathBlocked.mockReturnValue(true))).rejects.toMatchObject({
      context: { code: 'INVALID_INPUT', field: 'Folder' },
      message: `Credential "Singpass Session Store" ("Sessions on this host"), field "Folder": n8n does not allow access to ${blocked} (N8N_RESTRICT_FILE_ACCESS_TO, N8N_BLOCK_FILE_ACCESS_TO_N8N_FILES); use a folder under an allowed path, e.g. /home/node/.n8n-files/singpass`,
    });
    expect(fs.existsSync(blocked)).toBe(false);
    await expect(save({ kind: 'folder', folder: 'relative/dir' })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Folder' }, message: expect.stringMatching(/^Credential "Singpass Session Store" \("Sessions on this host"\), field "Folder": give an absolute folder path/) });
    await expect(save({ kind: 'folder', folder: dir, idleSeconds: -1 })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Leave a Step in Progress Alone For (Seconds)' } });
    await expect(save({ kind: 'dropbox' })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Kind' }, message: expect.stringMatching(/field "Kind": "dropbox" is not a kind/) });
    await expect(save({ kind: 'postgres', host: '', database: 'd', user: 'u' })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Host' } });
    await expect(save({ kind: 'postgres', host: 'db', database: 'd', user: 'u', port: 70000 })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Port' } });
    await expect(save({ kind: 'postgres', host: 'db', database: 'd', user: 'u', tablePrefix: 'Bad-Prefix' })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Table Prefix' }, message: expect.stringMatching(/^Credential "Singpass Session Store" \("Sessions on this host"\), field "Table Prefix": lower-case letters/) });
    // no credential picked on the node (n8n's own refusal, re-worded with what to pick)
    await expect(save(undefined)).rejects.toMatchObject({ context: { code: 'INVALID_INPUT', field: 'Credential to connect with' }, message: expect.stringMatching(/pick the "Singpass Session Store" credential the workflow's other Singpass nodes use/) });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('PostgreSQL nothing answers at Host:Port: STORE_BUSY (retryable) naming the Host / Port fields, never the password', async () => {
    const err = await run({ kind: 'postgres', host: '127.0.0.1', port: await freePort(), database: 'd', user: 'u', password: 'pw-never-shown' }, { operation: 'loadRecord', signRef: 'x', ifMissing: 'output' }).catch((e: unknown) => e) as { message: string; context: Record<string, unknown> };
    expect(err.context).toMatchObject({ code: 'STORE_BUSY', field: 'Host / Port' });
    expect(err.message).toMatch(/^Credential "Singpass Session Store", field "Host \/ Port": Session store \(PostgreSQL\) unreachable/);
    expect(err.message).not.toContain('pw-never-shown');
  });

  describe('on a real PostgreSQL', () => {
    let pg: Postgres;
    beforeAll(async () => {
      pg = await postgresDatabase();
    }, 120_000);
    afterAll(async () => {
      await closePgRecordStores();
      await pg?.stop();
    });

    it('the same operations with Kind PostgreSQL: switching a workflow to queue mode is this one credential\'s Kind and connection', async () => {
      const store = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.database, user: pg.user, password: pg.password, tablePrefix: 'cred_test_', idleSeconds: 30 };
      const pdf = Buffer.from('%PDF-1.7 pg');
      const [[created]] = await run(store, { operation: 'saveRecord', record: record('p1', 1), saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
      expect(created.json).toMatchObject({ saved: true, revision: 1 });
      const [[loaded]] = await run(store, { operation: 'loadRecord', signRef: 'p1', pdfBinaryField: 'data', ifMissing: 'error' });
      expect(binaryBuffer(loaded.binary!.data)).toEqual(pdf);
      const t = nowS();
      await run(store, { operation: 'saveRecord', record: record('p-idle', 1, 'certificate_received', { updatedAt: t - 40, scannedAt: t - 40 }, true), saveAs: 'new' });
      const [due] = await run(store, { operation: 'listDue' });
      expect(due.map((d) => [d.json.signRef, d.json.action])).toEqual([['p-idle', 'submitHash']]);
      // Delete Ended Sessions: the credential's retention (here 1 day, the one its due times were saved with), in the
      // store's one statement; p-idle stays leased to this process by the first list (another's schedule skips it)
      const oneDay = { ...store, retentionDays: 1 };
      await run(oneDay, { operation: 'saveRecord', record: record('p-ended', 1, 'failed', { updatedAt: t - 2 * 86_400 }), saveAs: 'new' });
      const [again] = await run(oneDay, { operation: 'listDue', deleteEnded: true });
      expect(again.map((d) => d.json.signRef)).toEqual([]);
      const [[gone]] = await run(store, { operation: 'loadRecord', signRef: 'p-ended', ifMissing: 'output' });
      expect(gone.json).toMatchObject({ found: false });
      expect(fs.readdirSync(dir)).toEqual([]); // nothing on disk
    });

    it('a wrong password: STORE_FAILED naming the User / Password fields; the credential\'s Test button says the same', async () => {
      const wrong = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.database, user: pg.user, password: 'not-the-password' };
      await expect(run(wrong, { operation: 'loadRecord', signRef: 'x', ifMissing: 'output' })).rejects.toMatchObject({
        context: { code: 'STORE_FAILED', field: 'User / Password' }, message: expect.stringMatching(/^Credential "Singpass Session Store", field "User \/ Password": Session store \(PostgreSQL\) refused the login/),
      });
      const ok = await testSessionStore.call({} as never, { id: 'c', name: 'c', type: STORE_CREDENTIAL, data: { ...wrong, password: pg.password } });
      expect(ok).toMatchObject({ status: 'OK', message: expect.stringMatching(/^Connected to PostgreSQL database/) });
      const refused = await testSessionStore.call({} as never, { id: 'c', name: 'c', type: STORE_CREDENTIAL, data: wrong });
      expect(refused).toMatchObject({ status: 'Error', message: expect.stringMatching(/refused the login.*\[STORE_FAILED\]/) });
    });
  });

  it('the credential\'s Test button checks a folder against N8N_RESTRICT_FILE_ACCESS_TO', async () => {
    const previous = process.env.N8N_RESTRICT_FILE_ACCESS_TO;
    process.env.N8N_RESTRICT_FILE_ACCESS_TO = dir;
    try {
      const test = (folder: string) => testSessionStore.call({} as never, { id: 'c', name: 'c', type: STORE_CREDENTIAL, data: { kind: 'folder', folder } });
      expect(await test(path.join(dir, 'records'))).toMatchObject({ status: 'OK', message: expect.stringMatching(/is allowed by n8n's file-access settings/) });
      expect(await test(os.tmpdir())).toMatchObject({ status: 'Error', message: expect.stringMatching(/Folder: n8n does not allow access to .* \[INVALID_INPUT\]/) });
    } finally {
      if (previous === undefined) delete process.env.N8N_RESTRICT_FILE_ACCESS_TO;
      else process.env.N8N_RESTRICT_FILE_ACCESS_TO = previous;
    }
  });

  it('the node is versioned: 3 by default, with the store credential on the Session Record resource and Check Certificate Status of the trigger\'s event only; version 1 keeps its Store parameter and PostgreSQL credential', () => {
    const d = new SingpassSign().description;
    expect(d).toMatchObject({ version: [1, 2, 3], defaultVersion: 3 });
    const store = d.credentials!.find((c) => c.name === STORE_CREDENTIAL)!;
    expect(store).toMatchObject({ required: true, testedBy: 'singpassSessionStoreApiTest', displayOptions: { show: { operation: [...Object.keys(operations.sessionRecord), 'checkCertificateStatus'], '@version': [2, 3] }, hide: { certificateFrom: ['field'] } } });
    const pg = d.credentials!.find((c) => c.name === 'singpassSessionStorePostgresApi')!;
    expect(pg.displayOptions).toEqual({ show: { resource: ['sessionRecord'], store: ['postgres'], '@version': [1] } });
    // the credential's own defaults: the sample's folder, the engine's take-over time and retention
    const props = new SingpassSessionStoreApi().properties;
    expect(props.find((p) => p.name === 'kind')!.default).toBe('folder');
    expect(props.find((p) => p.name === 'folder')!.default).toBe('/home/node/.n8n-files/singpass');
    expect(props.find((p) => p.name === 'idleSeconds')!.default).toBe(SESSION_POLICY.takeOverIdleMs / 1000);
    const retention = props.find((p) => p.name === 'retentionDays')!;
    expect([retention.default, retention.displayOptions]).toEqual([SESSION_POLICY.retentionMs / 86_400_000, undefined]); // both kinds
    for (const p of props.filter((x) => !['kind', 'folder', 'idleSeconds', 'retentionDays'].includes(x.name))) expect(p.displayOptions).toEqual({ show: { kind: ['postgres'] } });
    // List Due's Delete Ended Sessions: version 2 on, off unless a workflow turns it on
    expect(d.properties.find((p) => p.name === 'deleteEnded')).toMatchObject({ default: false, displayOptions: { show: { '@version': [2, 3], operation: ['listDue'] } } });
  });

  it('version 3 keeps every version-2 parameter as n8n loads a saved node (only Create Session\'s Signature Level default differs)', () => {
    const d = new SingpassSign().description;
    const listDue = { resource: 'sessionRecord', operation: 'listDue' };
    // version 1: its Store parameter; 2 and 3: the credential, and Delete Ended Sessions
    expect([1, 2, 3].map((v) => { const p = asN8nLoads(d, v, listDue); return [p.store, p.deleteEnded]; })).toEqual([['folder', undefined], [undefined, false], [undefined, false]]);
    const create = { resource: 'sessionRecord', operation: 'createStoredSession' };
    const { level: level2, ...v2 } = asN8nLoads(d, 2, create);
    const { level: level3, ...v3 } = asN8nLoads(d, 3, create);
    expect([level2, level3]).toEqual(['B-T', 'B-LTA']);
    expect(v3).toEqual(v2);
  });
});
