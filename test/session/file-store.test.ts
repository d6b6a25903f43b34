/**
 * The file session store (src/session/file-store.ts) on the real file system: atomic writes (a reader, or a process
 * killed mid-save, never leaves or sees a partial record), compare-and-set refusals, the lock under contention within
 * one process and across processes, a stale lock broken, listDue and cleanUp.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { FileSessionStore, fileStoreError, type SaveOutcome } from '../../src/session/file-store';
import { nextStep, withPhase, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import { expectPreviousVersionRecordsContinue } from './v2-records';

const REGISTER = path.join(__dirname, '../helpers/ts-register.js');
const STORE_MODULE = path.join(__dirname, '../../src/session/file-store.ts');

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-filestore-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const nowS = () => Math.floor(Date.now() / 1000);

/** A synthetic record (the store only reads format, state.signRef/status/updatedAt/expiresAt, revision, submitting, prepared). */
function record(signRef: string, revision: number, patch: { status?: string; updatedAt?: number; expiresAt?: number; savePoint?: boolean; padding?: number } = {}): SessionRecord {
  const status = patch.status ?? 'waiting_for_scan';
  return {
    format: 'singpass-flows/signing-session@1',
    state: {
      version: 1, signRef, status, expiresAt: patch.expiresAt ?? nowS() + 300, challengeCode: 'ABCD', clientNotificationToken: 'sfn1_x_y',
      updatedAt: patch.updatedAt ?? nowS(), ...(status === 'certificate_received' ? { scannedAt: patch.updatedAt ?? nowS(), nonce: 'n', certificate: 'MII' } : {}),
    },
    request: { documentName: 'x'.repeat(patch.padding ?? 1), level: 'B-T' },
    document: { length: 1, sha256: '00' },
    ...(patch.savePoint ? { prepared: { any: 'thing' }, submitting: { documentHash: 'ab'.repeat(32) } } : {}),
    revision,
  } as unknown as SessionRecord;
}

describe('FileSessionStore', () => {
  it('keeps each record as plain JSON in <signRef>.json (mode 0600), the PDF as <signRef>.pdf, and nothing else visible once saved', async () => {
    const store = new FileSessionStore(path.join(dir, 'nested', 'singpass'));
    const r = record('ref-1', 1);
    expect(await store.save(r, undefined, { document: Buffer.from('%PDF-1.7 test') })).toEqual({ saved: true, signRef: 'ref-1', revision: 1, status: 'waiting_for_scan' });
    const file = path.join(store.dir, 'ref-1.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(withPhase(r)); // the phase stored with it
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(store.dir, 'ref-1.pdf'), 'utf8')).toBe('%PDF-1.7 test');
    expect(fs.readdirSync(store.dir).sort()).toEqual(['ref-1.json', 'ref-1.pdf']); // no temporary or lock file left
    expect(await store.get('ref-1')).toEqual(withPhase(r));
    expect(await store.get('nope')).toBeUndefined();
    expect(await store.list()).toEqual(['ref-1']);
  });

  it('records written before phases were stored (files of the previous version) load with the phase their fields describe, list as due by it, and save on', async () => {
    const fixtures = path.join(__dirname, '../fixtures/session-records/v1');
    const store = new FileSessionStore(dir, { now: () => Date.now() + 365 * 86_400_000 });
    fs.mkdirSync(store.dir, { recursive: true });
    const files = fs.readdirSync(fixtures).filter((f) => f.endsWith('.json'));
    for (const f of files) {
      // one session may have been captured at several phases: each file gets a sign_ref of its own here
      const r = JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8')) as SessionRecord;
      fs.writeFileSync(path.join(store.dir, `mig-${f}`), JSON.stringify({ ...r, state: { ...r.state, signRef: `mig-${f.replace(/\.json$/, '')}` } }));
    }
    for (const f of files) {
      const signRef = `mig-${f.replace(/\.json$/, '')}`;
      const loaded = (await store.get(signRef))!;
      expect({ f, phase: loaded.phase }).toEqual({ f, phase: f.replace(/(-deferred)?\.json$/, '') });
      expect((await store.save({ ...loaded, revision: loaded.revision + 1 }, loaded.revision)).saved).toBe(true);
      expect(JSON.parse(fs.readFileSync(store.recordPath(signRef), 'utf8')).phase).toBe(loaded.phase);
    }
    // a year on, every session that has not ended is due, with the action its phase calls for
    const due = (await store.listDue({ idleSeconds: 0 })).due;
    expect(due.map((d) => [d.signRef, d.action]).sort()).toEqual(files.map((f) => `mig-${f.replace(/\.json$/, '')}`)
      .filter((ref) => !/completed|failed|expired/.test(ref)).map((ref) => [ref, nextStep(due.find((d) => d.signRef === ref)!.record).action]).sort());
    expect(Object.fromEntries(due.map((d) => [d.signRef, d.action]))).toMatchObject({ 'mig-certificateClaimed': 'continueCertificate', 'mig-atSavePoint': 'submitHash', 'mig-signed': 'finish', 'mig-waitingForScan': 'expire' });
  });

  it('records of the version before the hand-over (phase stored, no hand-over) load as they were: a completed one is not handed over again, a signed one finishes into it', async () => {
    const clock = { now: Date.now() };
    const store = new FileSessionStore(dir, { now: () => clock.now });
    const { driven } = await expectPreviousVersionRecordsContinue({
      store, clock,
      // that version's files: <signRef>.json (the record with its phase) and <signRef>.pdf
      write: async (records) => {
        fs.mkdirSync(store.dir, { recursive: true });
        for (const { record: r, pdf } of records) {
          fs.writeFileSync(store.recordPath(r.state.signRef), JSON.stringify(r));
          if (pdf) fs.writeFileSync(path.join(store.dir, `${r.state.signRef}.pdf`), pdf);
        }
      },
    });
    // this store keeps signed copies by default (signedDocuments: 'keep'): the flow's files, not the session's
    for (const signRef of driven) expect((await store.getSignedDocument(signRef))?.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('refuses path tricks in a signRef', async () => {
    const store = new FileSessionStore(dir);
    for (const bad of ['../x', 'a/b', '..', '.hidden', 'a\\b', '']) {
      await expect(store.get(bad)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(store.save(record(bad, 1), undefined)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('compare-and-set: a new record must not exist, an update must find the revision it loaded; a refusal is an outcome and keeps the stored record', async () => {
    const store = new FileSessionStore(dir);
    expect((await store.save(record('r', 1), undefined)).saved).toBe(true);
    expect(await store.save(record('r', 1), undefined)).toEqual({ saved: false, reason: 'exists', signRef: 'r', expectedRevision: undefined, storedRevision: 1, storedStatus: 'waiting_for_scan' });
    expect((await store.save(record('r', 2, { status: 'certificate_received' }), 1)).saved).toBe(true);
    // a second writer that also loaded revision 1 is refused and changes nothing
    const stale = await store.save(record('r', 2, { status: 'expired' }), 1);
    expect(stale).toEqual({ saved: false, reason: 'conflict', signRef: 'r', expectedRevision: 1, storedRevision: 2, storedStatus: 'certificate_received' });
    expect((await store.get('r'))!.state.status).toBe('certificate_received');
    expect(await store.save(record('gone', 2), 1)).toEqual({ saved: false, reason: 'missing', signRef: 'gone', expectedRevision: 1 });
    // the SessionStore interface: put resolves false on the same refusals
    expect(await store.put(record('r', 3), 1)).toBe(false);
    expect(await store.put(record('r', 3), 2)).toBe(true);
  });

  it('a reader never sees a partial record while large records are rewritten', async () => {
    const store = new FileSessionStore(dir);
    await store.save(record('big', 1, { padding: 2_000_000 }), undefined);
    const file = store.recordPath('big');
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        const text = fs.readFileSync(file, 'utf8'); // the file is always there: replaced by rename, never truncated
        expect(() => JSON.parse(text)).not.toThrow();
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let rev = 1; rev < 15; rev++) {
      expect((await store.save(record('big', rev + 1, { padding: 2_000_000 + rev }), rev)).saved).toBe(true);
    }
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(5);
    expect((await store.get('big'))!.revision).toBe(15);
  });

  it('a process SIGKILLed in the middle of saves leaves the last complete record (never an empty or partial file), and Clean Up removes its temporary file later', async () => {
    const store = new FileSessionStore(dir);
    await store.save(record('crash', 1, { padding: 4_000_000 }), undefined);
    // the child rewrites a 4 MB record as fast as it can; it is killed at a random moment
    const script = `const { FileSessionStore } = require(${JSON.stringify(STORE_MODULE)});
      const store = new FileSessionStore(${JSON.stringify(dir)});
      (async () => { for (let rev = 1; ; rev++) {
        const r = await store.get('crash');
        await store.save({ ...r, revision: r.revision + 1, request: { ...r.request, documentName: String(rev % 10).repeat(4000000) } }, r.revision);
        if (rev === 1) process.stdout.write('saving\\n');
      } })();`;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['-r', REGISTER, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const r = await store.get('crash'); // parses, or throws
      expect(r!.request.documentName).toHaveLength(4_000_000);
      // a lock the dead process held would be broken as stale; remove it here to keep the test fast
      fs.rmSync(path.join(dir, '.crash.lock'), { force: true });
    }
    expect((await store.get('crash'))!.revision).toBeGreaterThan(1);
    // a temporary file a kill left behind (if any) is hidden from *.json and removed by Clean Up once an hour old
    const temps = fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    for (const t of temps) fs.utimesSync(path.join(dir, t), new Date(Date.now() - 7_200_000), new Date(Date.now() - 7_200_000));
    expect((await store.cleanUp({ retentionSeconds: 86_400 })).tempFiles).toBe(temps.length);
    expect(fs.readdirSync(dir)).toEqual(['crash.json']);
  }, 60_000);

  it('concurrent saves of the same loaded revision in one process: exactly one wins, every other is refused', async () => {
    const store = new FileSessionStore(dir);
    for (let round = 0; round < 10; round++) {
      const ref = `race-${round}`;
      await store.save(record(ref, 1), undefined);
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, k) => store.save(record(ref, 2, { status: k % 2 ? 'completed' : 'hash_submitted', padding: 1000 + k }), 1)));
      expect(outcomes.filter((o) => o.saved)).toHaveLength(1);
      const winner = outcomes.findIndex((o) => o.saved);
      for (const o of outcomes.filter((x) => !x.saved)) expect(o).toMatchObject({ reason: 'conflict', storedRevision: 2 });
      expect((await store.get(ref))!.request.documentName).toHaveLength(1000 + winner);
    }
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('concurrent saves from several processes: each revision is written by exactly one of them (the lock makes check-and-rename atomic)', async () => {
    const store = new FileSessionStore(dir);
    await store.save(record('shared', 1), undefined);
    // 4 processes, each: load, save revision+1 with compare-and-set, 25 times; count the wins
    const script = `const { FileSessionStore } = require(${JSON.stringify(STORE_MODULE)});
      const store = new FileSessionStore(${JSON.stringify(dir)});
      (async () => { let wins = 0, refused = 0;
        for (let k = 0; k < 25; k++) {
          const r = await store.get('shared');
          const o = await store.save({ ...r, revision: r.revision + 1, request: { ...r.request, documentName: r.request.documentName + '|' + process.argv[1] } }, r.revision);
          o.saved ? wins++ : refused++;
        }
        process.stdout.write(JSON.stringify({ wins, refused }));
      })();`;
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((name) => new Promise<{ wins: number; refused: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', REGISTER, '-e', script, name], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child ${name} exited ${code}`))));
    })));
    const wins = results.reduce((n, r) => n + r.wins, 0);
    const final = (await store.get('shared'))!;
    // every win bumped the revision by one, and every win's mark is in the record: no save was lost or overwritten
    expect(final.revision).toBe(1 + wins);
    expect(final.request.documentName.split('|')).toHaveLength(1 + wins);
    expect(results.reduce((n, r) => n + r.wins + r.refused, 0)).toBe(100);
  }, 60_000);

  it('waits for a live lock (then saves), fails with STORE_BUSY after the timeout, and breaks a stale lock left by a dead process', async () => {
    const store = new FileSessionStore(dir, { lockTimeoutMs: 300, lockStaleMs: 2_000 });
    await store.save(record('l', 1), undefined);
    const lock = path.join(dir, '.l.lock');
    // a live lock (fresh mtime) held longer than the timeout
    fs.writeFileSync(lock, 'someone-else');
    const t0 = Date.now();
    await expect(store.save(record('l', 2), 1)).rejects.toMatchObject({ code: 'STORE_BUSY', details: { retryable: true } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect((await store.get('l'))!.revision).toBe(1);
    expect(fs.readFileSync(lock, 'utf8')).toBe('someone-else'); // not ours: left alone
    // released while we wait: the save goes through
    setTimeout(() => fs.rmSync(lock), 100);
    expect((await store.save(record('l', 2), 1)).saved).toBe(true);
    // a stale lock (its holder died 5 s ago): broken, the save goes through at once
    fs.writeFileSync(lock, 'dead-process');
    fs.utimesSync(lock, new Date(Date.now() - 5_000), new Date(Date.now() - 5_000));
    const t1 = Date.now();
    expect((await store.save(record('l', 3), 2)).saved).toBe(true);
    expect(Date.now() - t1).toBeLessThan(250);
    expect(fs.existsSync(lock)).toBe(false);
    // two stores racing to break the same stale lock: both saves are decided, exactly one wins
    fs.writeFileSync(lock, 'dead-process');
    fs.utimesSync(lock, new Date(Date.now() - 5_000), new Date(Date.now() - 5_000));
    const other = new FileSessionStore(dir, { lockTimeoutMs: 1_000, lockStaleMs: 2_000 });
    const both = await Promise.all([store.save(record('l', 4, { padding: 2 }), 3), other.save(record('l', 4, { padding: 3 }), 3)]);
    expect(both.filter((o: SaveOutcome) => o.saved)).toHaveLength(1);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('listDue: each record whose next step (the one rule, nextStep) is due, with its action; idleSeconds is the grace for a step in progress; never ended or waiting ones', async () => {
    let now = Date.now();
    const store = new FileSessionStore(dir, { now: () => now });
    const t = Math.floor(now / 1000);
    await store.save(record('fresh-save-point', 1, { status: 'certificate_received', savePoint: true, updatedAt: t - 10 }), undefined);
    await store.save(record('idle-save-point', 1, { status: 'certificate_received', savePoint: true, updatedAt: t - 50 }), undefined);
    await store.save(record('claimed-only', 1, { status: 'certificate_received', updatedAt: t - 50 }), undefined);
    await store.save(record('waiting', 1, { expiresAt: t + 100 }), undefined);
    await store.save(record('unscanned-past', 1, { expiresAt: t - 1 }), undefined);
    await store.save(record('submitted-past', 1, { status: 'hash_submitted', expiresAt: t - 500, updatedAt: t - 400 }), undefined);
    // signed (the second save point): finished by the execution that saved it, else taken over after the grace;
    // after a temporary finishing failure, from its retryAt
    await store.save(record('signed-fresh', 1, { status: 'signed', updatedAt: t - 10 }), undefined);
    await store.save(record('signed-idle', 1, { status: 'signed', updatedAt: t - 50 }), undefined);
    const failure = (retryAt: number) => ({ stage: 'documentTimestamp', code: 'TSA_FAILED', message: 'TSA down', at: now - 1000, attempts: 2, retryAt, finishBy: now + 86_400_000 });
    await store.save({ ...record('finish-retry-later', 1, { status: 'signed', updatedAt: t - 50 }), lastFinishFailure: failure(now + 60_000) } as SessionRecord, undefined);
    await store.save({ ...record('finish-retry-now', 1, { status: 'signed', updatedAt: t - 5 }), lastFinishFailure: failure(now - 1) } as SessionRecord, undefined);
    for (const s of ['completed', 'failed', 'expired']) await store.save(record(`ended-${s}`, 1, { status: s, expiresAt: t - 1000, updatedAt: t - 1000 }), undefined);
    fs.writeFileSync(path.join(dir, 'broken.json'), '');
    const { due, unreadable } = await store.listDue({ idleSeconds: 45 });
    // (the rule before nextStep left a claimed record alone until its deadline and knew no signed records: a claimed
    // record idle past the grace is now continueCertificate, a signed one finish)
    expect(due.map((d) => [d.signRef, d.action]).sort()).toEqual([
      ['claimed-only', 'continueCertificate'], ['finish-retry-now', 'finish'], ['idle-save-point', 'submitHash'], ['signed-idle', 'finish'],
      ['submitted-past', 'expire'], ['unscanned-past', 'expire'],
    ]);
    const idle = due.find((d) => d.signRef === 'idle-save-point')!;
    expect(idle.record.revision).toBe(1);
    expect(idle.at).toBe((t - 50 + 45) * 1000);
    expect(unreadable).toEqual(['broken']);
    now += 400_000; // past every deadline (expiresAt + 300 s) and every retryAt
    expect((await store.listDue({ idleSeconds: 45 })).due.map((d) => [d.signRef, d.action]).sort()).toEqual([
      ['claimed-only', 'continueCertificate'], ['finish-retry-later', 'finish'], ['finish-retry-now', 'finish'], ['fresh-save-point', 'submitHash'],
      ['idle-save-point', 'submitHash'], ['signed-fresh', 'finish'], ['signed-idle', 'finish'], ['submitted-past', 'expire'], ['unscanned-past', 'expire'], ['waiting', 'expire'],
    ]);
    await expect(store.listDue({ idleSeconds: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('cleanUp deletes ended sessions (record and PDF) past the retention, old PDFs without a record and old temporary files; keeps live sessions, recent ended ones, signed PDFs and other files', async () => {
    const store = new FileSessionStore(dir);
    const t = nowS();
    const day = 86_400;
    const pdf = Buffer.from('%PDF');
    for (const [ref, status, age] of [
      ['old-completed', 'completed', 8 * day], ['old-failed', 'failed', 8 * day], ['old-expired', 'expired', 30 * day],
      ['new-completed', 'completed', 1 * day], ['old-live', 'hash_submitted', 8 * day], ['old-waiting', 'waiting_for_scan', 8 * day],
    ] as const) {
      await store.save(record(ref, 1, { status, updatedAt: t - age }), undefined, { document: pdf });
    }
    fs.writeFileSync(path.join(dir, 'old-completed-signed.pdf'), pdf);
    const aged = (name: string, seconds: number) => fs.utimesSync(path.join(dir, name), new Date((t - seconds) * 1000), new Date((t - seconds) * 1000));
    aged('old-completed-signed.pdf', 30 * day);
    fs.writeFileSync(path.join(dir, 'orphan.pdf'), pdf);
    aged('orphan.pdf', 8 * day);
    fs.writeFileSync(path.join(dir, 'recent-orphan.pdf'), pdf);
    fs.writeFileSync(path.join(dir, '.x.json.1-abc.tmp'), '{');
    aged('.x.json.1-abc.tmp', 2 * 3600);
    fs.writeFileSync(path.join(dir, '.y.json.1-def.tmp'), '{'); // maybe a save in progress: kept
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');

    const r = await store.cleanUp({ retentionSeconds: 7 * day });
    expect(r.deleted.sort()).toEqual(['old-completed', 'old-expired', 'old-failed']);
    expect(r).toMatchObject({ documents: 3, orphanDocuments: 1, tempFiles: 1, kept: 3, unreadable: [] });
    expect(fs.readdirSync(dir).sort()).toEqual([
      '.y.json.1-def.tmp', 'new-completed.json', 'new-completed.pdf', 'notes.txt', 'old-completed-signed.pdf', 'old-live.json', 'old-live.pdf',
      'old-waiting.json', 'old-waiting.pdf', 'recent-orphan.pdf',
    ]);
    // run again: nothing more to do
    expect(await store.cleanUp({ retentionSeconds: 7 * day })).toMatchObject({ deleted: [], documents: 0, orphanDocuments: 0, tempFiles: 0, kept: 3 });
  });
});

/** A verified certificate delivery as the engine's checkDelivery gives it (certificate DER + base64). */
function certificateDelivery(signRef: string): VerifiedDelivery {
  const der = Buffer.from('3082010a0282010100c0ffee', 'hex');
  return {
    notificationToken: 'sfn1_a_b',
    event: {
      type: 'certificate', signRef, nonce: 'nonce-1', issuedAt: nowS(),
      certificate: { der, base64: der.toString('base64'), subject: 'CN=Tan Ah Kow', issuer: 'CN=CA', serialNumber: '01', notBefore: 'a', notAfter: 'b', publicKeyAlgorithm: 'EC' },
    },
  } as unknown as VerifiedDelivery;
}

function signatureDelivery(signRef: string): VerifiedDelivery {
  return { notificationToken: 'sfn1_a_b', event: { type: 'signature', signRef, documentHash: 'ab'.repeat(32), signature: '3006', issuedAt: nowS() } } as unknown as VerifiedDelivery;
}

describe('FileSessionStore: kept webhook deliveries (DeliveryStore)', () => {
  it('keeps a delivery once, whole, restores the certificate bytes, and forgets the certificate once applied', async () => {
    const store = new FileSessionStore(dir);
    const d = certificateDelivery('ref.a');
    expect(await store.rememberDelivery(d)).toBe(true);
    expect(await store.rememberDelivery(d)).toBe(false); // the service's retry: a duplicate
    expect(fs.readdirSync(path.join(dir, '.deliveries'))).toEqual(['ref.a.certificate.json']); // no temporary file left
    expect(fs.statSync(path.join(dir, '.deliveries', 'ref.a.certificate.json')).mode & 0o777).toBe(0o600);
    expect(await store.list()).toEqual([]); // not a record

    const kept = await store.getDelivery('ref.a', 'certificate');
    expect(kept).toMatchObject({ type: 'certificate', applied: false, receivedAt: expect.any(Number) });
    expect(kept!.delivery.notificationToken).toBe('sfn1_a_b');
    const cert = (kept!.delivery.event as { certificate: { der: Buffer; subject: string } }).certificate;
    expect(cert.der.equals(Buffer.from('3082010a0282010100c0ffee', 'hex'))).toBe(true);
    expect(cert.subject).toBe('CN=Tan Ah Kow');
    expect(await store.getDelivery('ref.a', 'signature')).toBeUndefined();

    expect(await store.rememberDelivery(signatureDelivery('ref.a'))).toBe(true);
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'ref.a', type: 'certificate' }, { signRef: 'ref.a', type: 'signature' }]);

    await store.markDeliveryApplied('ref.a', 'certificate');
    await store.markDeliveryApplied('ref.a', 'certificate'); // twice: no change
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'ref.a', type: 'signature' }]);
    const applied = await store.getDelivery('ref.a', 'certificate');
    expect(applied?.applied).toBe(true);
    expect(fs.readFileSync(path.join(dir, '.deliveries', 'ref.a.certificate.json'), 'utf8')).not.toContain('Tan Ah Kow');
    expect(await store.rememberDelivery(d)).toBe(false); // applied stays a duplicate

    await store.forgetDeliveries('ref.a');
    expect(await store.getDelivery('ref.a', 'certificate')).toBeUndefined();
    expect(await store.pendingDeliveries()).toEqual([]);
    await store.markDeliveryApplied('ref.a', 'signature'); // gone: nothing to mark, nothing written
    expect(fs.readdirSync(path.join(dir, '.deliveries'))).toEqual([]);
  });

  it('a session saved as ended (its certificate refused at the certificate step) keeps its kept certificate event no longer', async () => {
    const store = new FileSessionStore(dir);
    await store.save(record('refused', 1), undefined);
    await store.rememberDelivery(certificateDelivery('refused'));
    await store.save(record('refused', 2, { status: 'failed' }), 1);
    expect(await store.getDelivery('refused', 'certificate')).toMatchObject({ applied: true });
    expect(fs.readFileSync(path.join(dir, '.deliveries', 'refused.certificate.json'), 'utf8')).not.toMatch(/Tan Ah Kow|MIIBCgKCAQEAwP/);
  });

  it('hands back for replay only a delivery kept past the idle time that its session still needs; marks the others applied', async () => {
    const store = new FileSessionStore(dir);
    await store.save(record('waits', 1), undefined); // waiting for its certificate: still needs it
    await store.save(record('moved', 1, { status: 'certificate_received', savePoint: true }), undefined); // went past it
    for (const ref of ['waits', 'moved', 'gone']) await store.rememberDelivery(certificateDelivery(ref));
    const now = Date.now();
    expect(await store.claimDeliveriesToReplay({ idleMs: 60_000, now })).toEqual([]); // too fresh: its execution may be at work
    const replays = await store.claimDeliveriesToReplay({ idleMs: 60_000, now: now + 61_000 });
    expect(replays.map((r) => [r.kept.delivery.event.signRef, r.kept.type, r.record.state.signRef])).toEqual([['waits', 'certificate', 'waits']]);
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'waits', type: 'certificate' }]); // 'moved' and 'gone' marked applied
  });

  it('refuses a delivery file that is not one, and path tricks in the signRef or type', async () => {
    const store = new FileSessionStore(dir);
    await expect(store.rememberDelivery(certificateDelivery('../x'))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.getDelivery('ok', 'nope' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    fs.mkdirSync(path.join(dir, '.deliveries'));
    fs.writeFileSync(path.join(dir, '.deliveries', 'bad.signature.json'), '{"x":1}');
    await expect(store.getDelivery('bad', 'signature')).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expect(await store.pendingDeliveries()).toEqual([]); // skipped, not thrown
  });

  it('of many callers given the same event at once, in this process and in others, exactly one is told it is fresh', async () => {
    const store = new FileSessionStore(dir);
    const d = certificateDelivery('race');
    const local = await Promise.all(Array.from({ length: 8 }, () => store.rememberDelivery(d)));
    expect(local.filter(Boolean)).toHaveLength(1);

    const script = `const { FileSessionStore } = require(${JSON.stringify(STORE_MODULE)});
      const store = new FileSessionStore(${JSON.stringify(dir)});
      const d = { notificationToken: 't', event: { type: 'signature', signRef: 'race2', documentHash: 'ab', signature: '30', issuedAt: 1 } };
      Promise.all(Array.from({ length: 5 }, () => store.rememberDelivery(d))).then((r) => process.stdout.write(JSON.stringify(r.filter(Boolean).length)));`;
    const counts = await Promise.all([0, 1, 2].map(() => new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', REGISTER, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      child.once('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`child exited ${code}`))));
    })));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(fs.readdirSync(path.join(dir, '.deliveries')).sort()).toEqual(['race.certificate.json', 'race2.signature.json']);
  });

  it('a process killed (SIGKILL) the moment rememberDelivery resolved — the webhook\'s 200 — leaves the whole delivery', async () => {
    const script = `const { FileSessionStore } = require(${JSON.stringify(STORE_MODULE)});
      const store = new FileSessionStore(${JSON.stringify(dir)});
      const der = Buffer.from('c0ffee', 'hex');
      const d = { notificationToken: 't', event: { type: 'certificate', signRef: 'killed', nonce: 'n', issuedAt: 1, certificate: { der, base64: der.toString('base64'), subject: 'CN=x', issuer: 'CN=y', serialNumber: '1', notBefore: '', notAfter: '', publicKeyAlgorithm: 'EC' } } };
      store.rememberDelivery(d).then((fresh) => { process.stdout.write(fresh ? 'kept' : 'dup'); setInterval(() => {}, 1000); });`;
    const child = spawn(process.execPath, ['-r', REGISTER, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve) => child.stdout!.once('data', (c) => resolve(String(c))));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(said).toBe('kept');
    const store = new FileSessionStore(dir);
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'killed', type: 'certificate' }]);
    const kept = await store.getDelivery('killed', 'certificate');
    expect((kept!.delivery.event as { certificate: { der: Buffer } }).certificate.der.toString('hex')).toBe('c0ffee');
  });

  it('cleanUp with no retention uses the store policy; a store that forgets signed copies deletes them with their session (and old ones whose record is gone)', async () => {
    const day = 86_400;
    const t = nowS();
    const store = new FileSessionStore(dir, { policy: { retentionMs: 2 * day * 1000 }, signedDocuments: 'forget' });
    const pdf = Buffer.from('%PDF');
    await store.save(record('ended-old', 1, { status: 'completed', updatedAt: t - 3 * day }), undefined, { document: pdf });
    await store.save(record('ended-new', 1, { status: 'completed', updatedAt: t - 1 * day }), undefined);
    await store.putSignedDocument('ended-old', pdf);
    await store.putSignedDocument('ended-new', pdf);
    await store.putSignedDocument('gone-old', pdf);
    await store.putSignedDocument('gone-new', pdf);
    const old = new Date((t - 3 * day) * 1000);
    fs.utimesSync(path.join(dir, 'gone-old-signed.pdf'), old, old);
    const r = await store.cleanUp();
    expect(r).toMatchObject({ deleted: ['ended-old'], documents: 1, signedDocuments: 2 });
    expect(fs.readdirSync(dir).filter((n) => !n.startsWith('.')).sort()).toEqual(['ended-new-signed.pdf', 'ended-new.json', 'gone-new-signed.pdf']);
    // the default store keeps them (the CLI's product), with the policy's 7 days
    const keeping = new FileSessionStore(dir);
    await keeping.save(record('ended-week', 1, { status: 'failed', updatedAt: t - 8 * day }), undefined);
    await keeping.putSignedDocument('ended-week', pdf);
    expect((await keeping.cleanUp()).deleted).toEqual(['ended-week']);
    expect(fs.existsSync(path.join(dir, 'ended-week-signed.pdf'))).toBe(true);
  });

  it('cleanUp forgets the deliveries of the sessions it deletes, and deliveries whose record is long gone', async () => {
    const t = nowS();
    const day = 86_400;
    const store = new FileSessionStore(dir);
    await store.save(record('ended', 1, { status: 'completed', updatedAt: t - 8 * day }), undefined);
    await store.save(record('live', 1), undefined);
    for (const ref of ['ended', 'live', 'orphan', 'recent-orphan']) await store.rememberDelivery(signatureDelivery(ref));
    const old = new Date((t - 8 * day) * 1000);
    fs.utimesSync(path.join(dir, '.deliveries', 'orphan.signature.json'), old, old);
    fs.writeFileSync(path.join(dir, '.deliveries', '.z.signature.json.1-abc.tmp'), '{');
    const older = new Date((t - 2 * 3600) * 1000);
    fs.utimesSync(path.join(dir, '.deliveries', '.z.signature.json.1-abc.tmp'), older, older);

    const r = await store.cleanUp({ retentionSeconds: 7 * day });
    expect(r).toMatchObject({ deleted: ['ended'], tempFiles: 1, kept: 1 });
    expect(fs.readdirSync(path.join(dir, '.deliveries')).sort()).toEqual(['live.signature.json', 'recent-orphan.signature.json']);
  });

  it('listDue with a retention also deletes the ended sessions past it (record, PDF, deliveries) that its walk read, without a second pass; without one it deletes nothing', async () => {
    const t = nowS();
    const day = 86_400;
    const store = new FileSessionStore(dir);
    const pdf = Buffer.from('%PDF');
    for (const [ref, status, age] of [
      ['old-completed', 'completed', 8 * day], ['old-failed', 'failed', 30 * day], ['new-expired', 'expired', 1 * day], ['old-waiting', 'waiting_for_scan', 8 * day],
    ] as const) {
      await store.save(record(ref, 1, { status, updatedAt: t - age, expiresAt: t + 300 }), undefined, { document: pdf });
    }
    await store.rememberDelivery(signatureDelivery('old-completed'));
    fs.writeFileSync(path.join(dir, 'old-completed-signed.pdf'), pdf);

    const plain = await store.listDue({ idleSeconds: 45 });
    expect(plain.deleted).toEqual([]);
    expect((await store.list()).length).toBe(4);

    const reads = jest.spyOn(store, 'get');
    const r = await store.listDue({ idleSeconds: 45, retentionSeconds: 7 * day });
    expect(r.deleted.sort()).toEqual(['old-completed', 'old-failed']);
    // each record read once by the walk, and each deleted one once more under its lock (another run may have changed it)
    expect(reads).toHaveBeenCalledTimes(4 + 2);
    expect(r.due.map((d) => d.signRef)).toEqual([]);
    expect(fs.readdirSync(dir).filter((n) => !n.startsWith('.')).sort()).toEqual(['new-expired.json', 'new-expired.pdf', 'old-completed-signed.pdf', 'old-waiting.json', 'old-waiting.pdf']);
    expect(fs.readdirSync(path.join(dir, '.deliveries'))).toEqual([]);
    await expect(store.listDue({ idleSeconds: 45, retentionSeconds: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('fileStoreError', () => {
  it('words a file-system failure as STORE_BUSY (may pass) or STORE_FAILED (an admin must act); typed errors pass through', async () => {
    fs.writeFileSync(path.join(dir, 'file'), 'not a folder');
    const store = new FileSessionStore(path.join(dir, 'file', 'sessions'));
    const raw = await store.rememberDelivery(signatureDelivery('x')).catch((e: unknown) => e);
    expect(fileStoreError(raw, store.dir, 'keep a delivery')).toMatchObject({ code: 'STORE_FAILED', details: { errno: 'ENOTDIR', retryable: false } });
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    expect(fileStoreError(full, dir, 'save a record')).toMatchObject({ code: 'STORE_BUSY', details: { retryable: true } });
    const typed = new SingpassFlowsError('STORE_BUSY', 'lock held');
    expect(fileStoreError(typed, dir, 'x')).toBe(typed);
  });

  it('reads a record from a folder replaced by a file as STORE_FAILED (an admin must act), not as a passing fault', async () => {
    fs.writeFileSync(path.join(dir, 'file'), 'not a folder');
    const store = new FileSessionStore(path.join(dir, 'file', 'sessions'));
    await expect(store.get('ref-1')).rejects.toMatchObject({ code: 'STORE_FAILED', details: { errno: 'ENOTDIR', retryable: false } });
  });
});
