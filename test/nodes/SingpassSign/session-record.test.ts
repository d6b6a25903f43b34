/**
 * The Singpass Sign node's Session Record resource (thin n8n operations over src/session/file-store.ts): Save (new /
 * compare-and-set update, with the PDF), Load (with the PDF; missing → found: false or an error), List Due, Clean Up,
 * n8n's file-access check on the folder, and no Singpass credential needed — as VERSION 1 nodes (workflows saved
 * before the store credential) run them: the store in the node's Store / Folder parameters. Version 2 (the store
 * credential): store-credential.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { SESSION_POLICY, withPhase, type SessionRecord } from '../../../src/session';
import { binaryBuffer, executeContext, pdfItem } from '../context';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-node-records-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

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

function run(params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }], setup?: (ctx: ReturnType<typeof executeContext>) => void) {
  const ctx = executeContext({ params: { resource: 'sessionRecord', folder: dir, ...params }, items, typeVersion: 1 });
  setup?.(ctx);
  return new SingpassSign().execute.call(ctx);
}

describe('Singpass Sign node version 1: Session Record on the Store and Folder parameters', () => {
  it('Save (new, with the PDF) → Load (with the PDF) → Save (update with the loaded revision) → a second update from the same load is refused, not thrown', async () => {
    const pdf = Buffer.from('%PDF-1.7 sample');
    const first = record('s1', 1);
    const [[created]] = await run({ operation: 'saveRecord', record: first, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
    expect(created.json).toEqual({ saved: true, outcome: 'saved', signRef: 's1', status: 'waiting_for_scan', revision: 1 });
    expect(created.binary?.data).toBeDefined(); // the input's binary passes through
    expect(JSON.parse(fs.readFileSync(path.join(dir, 's1.json'), 'utf8'))).toEqual(withPhase(first)); // the phase stored with it

    const [[loaded]] = await run({ operation: 'loadRecord', signRef: 's1', pdfBinaryField: 'data', ifMissing: 'output' });
    expect(loaded.json).toMatchObject({ found: true, revision: 1, signRef: 's1', status: 'waiting_for_scan', record: first });
    expect(binaryBuffer(loaded.binary!.data)).toEqual(pdf);

    const [[updated]] = await run({ operation: 'saveRecord', record: record('s1', 2, 'completed'), saveAs: 'update', expectedRevision: loaded.json.revision, pdfBinaryField: '' });
    expect(updated.json).toMatchObject({ saved: true, revision: 2, status: 'completed' });
    const [[late]] = await run({ operation: 'saveRecord', record: record('s1', 2, 'hash_submitted'), saveAs: 'update', expectedRevision: 1, pdfBinaryField: '' });
    expect(late.json).toMatchObject({ saved: false, outcome: 'conflict', expectedRevision: 1, storedRevision: 2, storedStatus: 'completed', message: expect.stringMatching(/another execution changed the session first/) });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 's1.json'), 'utf8')).state.status).toBe('completed');
    // a record as text (a Data Table column) works too; a missing loaded revision is a clear error
    const [[again]] = await run({ operation: 'saveRecord', record: JSON.stringify(record('s1', 1)), saveAs: 'new' });
    expect(again.json).toMatchObject({ saved: false, outcome: 'exists', storedRevision: 2 });
    await expect(run({ operation: 'saveRecord', record: record('s1', 3), saveAs: 'update', expectedRevision: 0 })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Loaded Revision/) });
  });

  it('Load of a missing record: found: false, or STATE_INVALID when asked; a path-trick signRef is refused', async () => {
    const [[missing]] = await run({ operation: 'loadRecord', signRef: 'nope', ifMissing: 'output' });
    expect(missing.json).toEqual({ found: false, signRef: 'nope' });
    await expect(run({ operation: 'loadRecord', signRef: 'nope', ifMissing: 'error' })).rejects.toMatchObject({ context: { code: 'STATE_INVALID' }, message: expect.stringMatching(/No session record for nope/) });
    await expect(run({ operation: 'loadRecord', signRef: '../etc/passwd', ifMissing: 'output' })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' } });
  });

  it('List Due outputs one item per due session with its action (the engine\'s nextStep) and revision; none when nothing is due', async () => {
    const t = nowS();
    await run({ operation: 'saveRecord', record: record('idle', 1, 'certificate_received', { updatedAt: t - 60, scannedAt: t - 60 }, true), saveAs: 'new' });
    await run({ operation: 'saveRecord', record: record('live', 1), saveAs: 'new' });
    await run({ operation: 'saveRecord', record: record('late', 1, 'waiting_for_scan', { expiresAt: t - 5 }), saveAs: 'new' });
    await run({ operation: 'saveRecord', record: record('unfinished', 2, 'signed', { updatedAt: t - 60 }, true), saveAs: 'new' });
    await run({ operation: 'saveRecord', record: record('finishing', 2, 'signed', { updatedAt: t - 5 }, true), saveAs: 'new' });
    const [due] = await run({ operation: 'listDue', idleSeconds: 45 });
    expect(due.map((d) => [d.json.signRef, d.json.action, d.json.revision]).sort()).toEqual([['idle', 'submitHash', 1], ['late', 'expire', 1], ['unfinished', 'finish', 2]]);
    expect(due.find((d) => d.json.signRef === 'late')!.json.dueSince).toBe(new Date((t - 5) * 1000).toISOString());
    expect(due[0].pairedItem).toEqual({ item: 0 });
    await expect(run({ operation: 'listDue', idleSeconds: -1 })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' } });
    const [none] = await run({ operation: 'listDue', idleSeconds: 3600 }, [{ json: {} }], () => ['late', 'unfinished'].forEach((r) => fs.rmSync(path.join(dir, `${r}.json`))));
    expect(none).toEqual([]);
  });

  it('Clean Up deletes ended sessions past the retention with their PDFs and keeps the rest', async () => {
    const t = nowS();
    await run({ operation: 'saveRecord', record: record('done', 1, 'completed', { updatedAt: t - 3 * 86_400 }), saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(Buffer.from('%PDF'))]);
    await run({ operation: 'saveRecord', record: record('live', 1, 'hash_submitted', { updatedAt: t - 3 * 86_400 }), saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(Buffer.from('%PDF'))]);
    const [[out]] = await run({ operation: 'cleanUp', retentionDays: 2 });
    expect(out.json).toEqual({ deletedSessions: 1, deleted: ['done'], deletedPdfs: 1, tempFiles: 0, kept: 1, unreadable: [] });
    expect(fs.readdirSync(dir).sort()).toEqual(['live.json', 'live.pdf']);
  });

  it('a folder n8n blocks (N8N_RESTRICT_FILE_ACCESS_TO) is refused before anything is written; a relative folder too', async () => {
    const blockedDir = path.join(dir, 'blocked');
    await expect(run({ operation: 'saveRecord', folder: blockedDir, record: record('b', 1), saveAs: 'new' }, undefined, (ctx) => {
      ctx.helpers.isFilePathBlocked.mockReturnValue(true);
    })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/n8n does not allow access/) });
    expect(fs.existsSync(blockedDir)).toBe(false);
    await expect(run({ operation: 'cleanUp', folder: 'relative/dir', retentionDays: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/absolute folder path/) });
  });

  it('the resource needs no Singpass credential but for the steps it runs on a stored session (Create Session, Prepare, Submit, Run Due Step, Start Next Signer), the link key for Signer Page, and its Folder (version 1 only) defaults to the sample workflow\'s', () => {
    const d = new SingpassSign().description;
    const api = d.credentials!.find((c) => c.name === 'singpassSignApi')!;
    expect(api.displayOptions).toEqual({ hide: { operation: ['saveRecord', 'loadRecord', 'listDue', 'cleanUp', 'saveSignedPdf', 'signerPage', 'acknowledgeStoredPdf', 'reportStorageFailure'] } });
    const tokens = d.credentials!.find((c) => c.name === 'singpassNotificationTokenApi')!;
    expect(tokens.displayOptions!.show!.operation).toEqual(expect.arrayContaining(['createSession', 'createStoredSession', 'prepareStoredSignature', 'submitStoredHash', 'runDueStep', 'startNextSigner', 'signerPage']));
    const folder = d.properties.filter((p: INodeProperties) => p.name === 'folder');
    expect(folder.length).toBe(13); // one per Session Record operation
    // the editor's defaults are literals (n8n's lint): the engine's policy, written out
    for (const p of d.properties.filter((x: INodeProperties) => x.name === 'idleSeconds')) expect(p.default).toBe(SESSION_POLICY.takeOverIdleMs / 1000);
    expect(d.properties.find((x: INodeProperties) => x.name === 'retentionDays')!.default).toBe(SESSION_POLICY.retentionMs / 86_400_000);
    for (const f of folder) expect(f.default).toBe('/home/node/.n8n-files/singpass');
    // the Store, Folder and idle-time parameters are version 1's; version 2 takes them from the store credential
    for (const p of d.properties.filter((x: INodeProperties) => ['store', 'folder', 'idleSeconds'].includes(x.name))) expect(p.displayOptions?.show?.['@version']).toEqual([1]);
  });
});
