/**
 * The PostgreSQL session store (src/session/pg-store.ts) against a real PostgreSQL 15 started for this file on
 * 127.0.0.1 (test/helpers/postgres.ts): compare-and-set in one statement (within a process and across processes),
 * the PDF in its own table, listDue by the due_at index agreeing with nextStep, claimDue, cleanUp, migrations (twice,
 * concurrently in one process and from two processes), and a server restart under a live pool.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Client, Pool } from 'pg';
import { PgSessionStore, SESSION_POLICY, dueRule, isDue, nextStep, withPhase, type SaveOutcome, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import { isSingpassFlowsError } from '../../src/errors';
import { freePort } from '../helpers/ports';
import { startPostgres, type Postgres } from '../helpers/postgres';
import { expectPreviousVersionRecordsContinue } from './v2-records';

const REGISTER = path.join(__dirname, '../helpers/ts-register.js');
const STORE_MODULE = path.join(__dirname, '../../src/session/pg-store.ts');

let pg: Postgres;
const stores: PgSessionStore[] = [];
/** A store on its own tables (a fresh prefix per test keeps the tests apart on one database). */
const open = (prefix: string, options: ConstructorParameters<typeof PgSessionStore>[1] = {}): PgSessionStore => {
  const s = new PgSessionStore(pg.url, { tablePrefix: prefix, ...options });
  stores.push(s);
  return s;
};
/** SQL as the superuser, for what the store's API does not show (catalog, statistics, raw rows). */
let admin: Pool;
const sql = async <T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> => (await admin.query(text, values)).rows as T[];

beforeAll(async () => {
  pg = await startPostgres();
  admin = new Pool({ connectionString: pg.url, max: 2 });
  admin.on('error', () => undefined); // idle connections cut by the restart test
}, 120_000);
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await admin?.end();
  await pg?.stop();
});

type Phase = 'waiting' | 'claimed' | 'savePoint' | 'submitted' | 'signed' | 'completed' | 'failed' | 'expired';

/**
 * A minimal valid record at a phase (the fields the phase rule reads: status, certificate + nonce for a claim,
 * prepared + submitting at the save point, lastSubmitFailure / lastFinishFailure with their retryAt).
 */
function record(signRef: string, revision: number, o: { phase?: Phase; updatedAt?: number; expiresAt?: number; retryAt?: number; padding?: number; mark?: string } = {}): SessionRecord {
  const phase = o.phase ?? 'waiting';
  const t = o.updatedAt ?? Math.floor(Date.now() / 1000);
  const status = { waiting: 'waiting_for_scan', claimed: 'certificate_received', savePoint: 'certificate_received', submitted: 'hash_submitted', signed: 'signed', completed: 'completed', failed: 'failed', expired: 'expired' }[phase];
  const scanned = phase === 'claimed' || phase === 'savePoint' || phase === 'submitted';
  return {
    format: 'singpass-flows/signing-session@1',
    state: {
      version: 1, signRef, status, expiresAt: o.expiresAt ?? t + 300, challengeCode: 'ABCD', clientNotificationToken: 'sfn1_x_y', updatedAt: t,
      ...(scanned ? { scannedAt: t } : {}), ...(phase === 'claimed' || phase === 'savePoint' ? { nonce: 'n', certificate: 'MII' } : {}),
    },
    request: { documentName: o.mark ?? 'x'.repeat(o.padding ?? 1), level: 'B-T' },
    document: { length: 1, sha256: '00' },
    ...(phase === 'savePoint' ? { prepared: { any: 'thing' }, submitting: { documentHash: 'ab'.repeat(32), attempts: 1 } } : {}),
    ...(phase === 'savePoint' && o.retryAt ? { lastSubmitFailure: { code: 'HTTP_TIMEOUT', message: 'm', at: t * 1000, attempts: 1, retryAt: o.retryAt } } : {}),
    ...(phase === 'signed' && o.retryAt ? { lastFinishFailure: { stage: 'embed', code: 'TSA_FAILED', message: 'm', at: t * 1000, attempts: 1, retryAt: o.retryAt, finishBy: o.retryAt + 86_400_000 } } : {}),
    ...(phase === 'completed' ? { result: { level: 'B-T', valid: true } } : {}),
    revision,
  } as unknown as SessionRecord;
}

/** A child process running `body` with `store` (a PgSessionStore on PG_URL/PREFIX); resolves with its stdout. */
function child(body: string, env: Record<string, string>, onStdout?: (text: string, stdin: NodeJS.WritableStream) => void): Promise<string> {
  const script = `const { PgSessionStore } = require(${JSON.stringify(STORE_MODULE)});
    const store = new PgSessionStore(process.env.PG_URL, { tablePrefix: process.env.PREFIX });
    (async () => { ${body} })().then(() => store.close()).catch((e) => { console.error(e); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['-r', REGISTER, '-e', script], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, PG_URL: pg.url, ...env } });
    let out = '';
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      onStdout?.(out, c.stdin!);
    });
    c.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${out}`))));
  });
}

describe('PgSessionStore: records', () => {
  it('creates its schema on first use: schema_version 4, sessions (record JSONB + columns), documents (BYTEA), the due_at index', async () => {
    const store = open('schema_');
    expect(await store.schemaVersion()).toBe(0);
    expect(await store.list()).toEqual([]); // first call migrates
    expect(await store.schemaVersion()).toBe(4);
    const cols = await sql<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_name LIKE 'schema\\_%' ORDER BY table_name, column_name`);
    const byTable = (t: string) => Object.fromEntries(cols.filter((c) => c.table_name === t).map((c) => [c.column_name, c.data_type]));
    expect(byTable('schema_sessions')).toMatchObject({ sign_ref: 'text', revision: 'integer', status: 'text', due_at: 'bigint', updated_at: 'timestamp with time zone', record: 'jsonb', next_action: 'text' });
    expect(byTable('schema_documents')).toMatchObject({ sign_ref: 'text', pdf: 'bytea' });
    expect(byTable('schema_schema_version')).toMatchObject({ version: 'integer' });
    expect(byTable('schema_deliveries')).toMatchObject({ sign_ref: 'text', type: 'text', applied: 'boolean', received_at: 'bigint', delivery: 'jsonb' });
    const idx = await sql<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'schema_sessions'`);
    expect(idx.map((i) => i.indexdef).join('\n')).toMatch(/INDEX schema_sessions_due_at ON public\.schema_sessions USING btree \(due_at, sign_ref\)/);
    // clean-up's index: the rows nextStep said `forget` for, by due time
    expect(idx.map((i) => i.indexdef).join('\n')).toMatch(/INDEX schema_sessions_forget ON public\.schema_sessions USING btree \(due_at\) WHERE \(next_action = 'forget'::text\)/);
  });

  it('saves, loads, lists and deletes records; the PDF round-trips byte for byte in its own table', async () => {
    const store = open('crud_');
    const pdf = randomBytes(3 * 1024 * 1024);
    const r = record('ref-1', 1, { mark: 'Vertrag – 合同 – "quoted" \\ back' });
    expect(await store.save(r, undefined, { document: pdf })).toEqual({ saved: true, signRef: 'ref-1', revision: 1, status: 'waiting_for_scan' });
    expect(await store.get('ref-1')).toEqual(withPhase(r));
    expect((await store.getDocument('ref-1'))!.equals(pdf)).toBe(true);
    // a copy each time: changing what get() returned changes nothing stored
    const loaded = (await store.get('ref-1'))!;
    loaded.request.documentName = 'changed';
    expect((await store.get('ref-1'))!.request.documentName).toBe(r.request.documentName);
    // the columns follow the record at every write
    const [row] = await sql<{ revision: number; status: string; next_action: string; due_at: string; updated_at: Date; pdf_bytes: number }>(
      `SELECT s.revision, s.status, s.next_action, s.due_at, s.updated_at, octet_length(d.pdf) AS pdf_bytes FROM crud_sessions s JOIN crud_documents d USING (sign_ref) WHERE sign_ref = 'ref-1'`);
    expect(row).toEqual({ revision: 1, status: 'waiting_for_scan', next_action: 'expire', due_at: String(nextStep(r, { idleMs: 45_000 }).at), updated_at: new Date(r.state.updatedAt * 1000), pdf_bytes: pdf.length });
    expect(await store.get('nope')).toBeUndefined();
    expect(await store.getDocument('nope')).toBeUndefined();
    await store.putDocument('ref-2', Buffer.from('%PDF-2'));
    await store.putDocument('ref-2', Buffer.from('%PDF-2 replaced'));
    expect((await store.getDocument('ref-2'))!.toString()).toBe('%PDF-2 replaced');
    await store.save(record('ref-0', 1), undefined);
    expect(await store.list()).toEqual(['ref-0', 'ref-1']);
    await store.delete('ref-1');
    expect(await store.get('ref-1')).toBeUndefined();
    expect(await store.getDocument('ref-1')).toBeDefined(); // the PDF has its own delete (the runner deletes it at the end)
    await store.deleteDocument('ref-1');
    expect(await store.getDocument('ref-1')).toBeUndefined();
    expect(await store.list()).toEqual(['ref-0']);
  });

  it('a PDF this process wrote or read is served from memory while its row keeps its version; another process\'s rewrite or delete is seen', async () => {
    const a = open('doccache_');
    const b = open('doccache_'); // another process: its own pool and memory
    const pdf = Buffer.concat([Buffer.from('%PDF-'), randomBytes(256 * 1024)]); // first byte not 0: the overlay below changes it
    await a.save(record('ref-1', 1), undefined, { document: pdf });
    // bytes changed behind the store's back, the row's version (written_at, size) kept: A serves what it wrote, B reads the row
    await sql(`UPDATE doccache_documents SET pdf = overlay(pdf placing '\\x00'::bytea from 1) WHERE sign_ref = 'ref-1'`);
    expect((await a.getDocument('ref-1'))!.equals(pdf)).toBe(true);
    expect((await b.getDocument('ref-1'))![0]).toBe(0);
    // a rewrite by B (a new version) is what A returns next, and then keeps
    const second = Buffer.concat([pdf, Buffer.from('more')]);
    await b.putDocument('ref-1', second);
    expect((await a.getDocument('ref-1'))!.equals(second)).toBe(true);
    await sql(`UPDATE doccache_documents SET pdf = overlay(pdf placing '\\x00'::bytea from 1) WHERE sign_ref = 'ref-1'`);
    expect((await a.getDocument('ref-1'))!.equals(second)).toBe(true);
    // deleted by B: gone for A too
    await b.deleteDocument('ref-1');
    expect(await a.getDocument('ref-1')).toBeUndefined();
    // a rolled-back write is not kept: the refused save's PDF is never served
    await a.save(record('ref-2', 1), undefined, { document: pdf });
    expect(await a.save(record('ref-2', 1), undefined, { document: second })).toMatchObject({ saved: false, reason: 'exists' });
    expect((await a.getDocument('ref-2'))!.equals(pdf)).toBe(true);
    // ended sessions cleaned up go from memory with their rows
    await a.save(record('ref-3', 1, { phase: 'completed', updatedAt: Math.floor(Date.now() / 1000) - 10 }), undefined, { document: pdf });
    expect((await a.cleanUp({ retentionSeconds: 5 })).deleted).toEqual(['ref-3']);
    expect(await a.getDocument('ref-3')).toBeUndefined();
    // without the cache every read is the row's
    const c = open('doccache_', { documentCache: false });
    await c.putDocument('ref-4', pdf);
    await sql(`UPDATE doccache_documents SET pdf = overlay(pdf placing '\\x00'::bytea from 1) WHERE sign_ref = 'ref-4'`);
    expect((await c.getDocument('ref-4'))![0]).toBe(0);
  });

  it('compare-and-set: exists / conflict / missing are outcomes that keep the stored record; a refused save writes no PDF', async () => {
    const store = open('cas_');
    expect((await store.save(record('r', 1), undefined, { document: Buffer.from('first') })).saved).toBe(true);
    expect(await store.save(record('r', 1), undefined)).toEqual({ saved: false, reason: 'exists', signRef: 'r', expectedRevision: undefined, storedRevision: 1, storedStatus: 'waiting_for_scan' });
    expect((await store.save(record('r', 2, { phase: 'claimed' }), 1)).saved).toBe(true);
    const stale = await store.save(record('r', 2, { phase: 'expired' }), 1, { document: Buffer.from('second') });
    expect(stale).toEqual({ saved: false, reason: 'conflict', signRef: 'r', expectedRevision: 1, storedRevision: 2, storedStatus: 'certificate_received' });
    expect((await store.get('r'))!.state.status).toBe('certificate_received');
    expect((await store.getDocument('r'))!.toString()).toBe('first');
    expect(await store.save(record('gone', 2), 1)).toEqual({ saved: false, reason: 'missing', signRef: 'gone', expectedRevision: 1 });
    expect(await store.put(record('r', 3), 1)).toBe(false);
    expect(await store.put(record('r', 3), 2)).toBe(true);
    // record and PDF in one transaction: both written
    expect((await store.save(record('r', 4), 3, { document: Buffer.from('third') })).saved).toBe(true);
    expect((await store.getDocument('r'))!.toString()).toBe('third');
  });

  it('concurrent saves of the same loaded revision through one pool: exactly one wins, every other is a conflict', async () => {
    const store = open('race1_');
    for (let round = 0; round < 5; round++) {
      const ref = `race-${round}`;
      await store.save(record(ref, 1), undefined);
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, k) => store.save(record(ref, 2, { mark: `w${k}` }), 1)));
      expect(outcomes.filter((o) => o.saved)).toHaveLength(1);
      for (const o of outcomes.filter((x) => !x.saved)) expect(o).toMatchObject({ reason: 'conflict', storedRevision: 2 });
      expect((await store.get(ref))!.request.documentName).toBe(`w${outcomes.findIndex((o) => o.saved)}`);
    }
  });

  it('refuses bad input with typed errors: table prefixes that are not plain identifiers, bad records and revisions, bad signRefs', async () => {
    for (const bad of ['x; DROP TABLE y; --', 'Upper_', '1abc', 'a-b', '"q"', '', 'p'.repeat(60)]) {
      expect(thrown(() => new PgSessionStore(pg.url, { tablePrefix: bad }))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'tablePrefix' } });
    }
    expect(thrown(() => new PgSessionStore(''))).toMatchObject({ code: 'INVALID_INPUT' });
    const store = open('bad_');
    await expect(store.save({ format: 'x' } as unknown as SessionRecord, undefined)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    await expect(store.save(record('r', 1.5), undefined)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    await expect(store.save(record('r', 2), 0.5)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.get('')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.get('has space')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // a NUL character JSONB cannot hold: a typed error, nothing stored
    await expect(store.save(record('nul', 1, { mark: 'a\u0000b' }), undefined)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expect(await store.list()).toEqual([]);
  });
});

describe('PgSessionStore: due sessions', () => {
  const T = Math.floor(Date.now() / 1000) * 1000;
  const t = T / 1000;
  const day = 86_400;
  const fixtures = (): SessionRecord[] => [
    record('waiting-live', 1, { expiresAt: t + 100 }),
    record('waiting-past', 1, { expiresAt: t - 1, updatedAt: t - 300 }),
    record('claimed-fresh', 2, { phase: 'claimed', updatedAt: t - 10, expiresAt: t + 200 }),
    record('claimed-idle', 2, { phase: 'claimed', updatedAt: t - 50, expiresAt: t + 200 }),
    record('savepoint-fresh', 3, { phase: 'savePoint', updatedAt: t - 10, expiresAt: t + 200 }),
    record('savepoint-idle', 3, { phase: 'savePoint', updatedAt: t - 52, expiresAt: t + 200 }),
    record('savepoint-deferred', 4, { phase: 'savePoint', updatedAt: t - 100, expiresAt: t + 200, retryAt: T + 5_000 }),
    record('submitted-live', 4, { phase: 'submitted', updatedAt: t - 10, expiresAt: t + 100 }),
    record('submitted-past', 4, { phase: 'submitted', updatedAt: t - 400, expiresAt: t - 500 }),
    record('signed-idle', 5, { phase: 'signed', updatedAt: t - 60 }),
    record('signed-fresh', 5, { phase: 'signed', updatedAt: t - 5 }),
    record('signed-deferred', 6, { phase: 'signed', updatedAt: t - 100, retryAt: T + 10_000 }),
    record('completed-old', 7, { phase: 'completed', updatedAt: t - 8 * day }),
    record('completed-new', 7, { phase: 'completed', updatedAt: t - day }),
    record('failed-old', 7, { phase: 'failed', updatedAt: t - 8 * day }),
  ];

  it('listDue: exactly the sessions whose next step is due, oldest first, with nextStep\'s action; agrees with isDue at every time', async () => {
    const store = open('due_', { now: () => T });
    const records = fixtures();
    for (const r of records) await store.save(r, undefined);
    const { due, unreadable } = await store.listDue();
    expect(unreadable).toEqual([]);
    expect(due.map((d) => [d.signRef, d.action])).toEqual([
      ['submitted-past', 'expire'], // deadline scannedAt + 120 s = t - 280
      ['signed-idle', 'finish'], // t - 60 + 45
      ['savepoint-idle', 'submitHash'], // t - 52 + 45
      ['claimed-idle', 'continueCertificate'], // t - 50 + 45
      ['waiting-past', 'expire'], // expiresAt t - 1
    ]);
    for (const d of due) {
      expect(d.at).toBe(nextStep(d.record, { idleMs: 45_000 }).at);
      expect(d.record).toEqual(withPhase(records.find((r) => r.state.signRef === d.signRef)!));
    }
    expect((await store.listDue({ limit: 2 })).due.map((d) => d.signRef)).toEqual(['submitted-past', 'signed-idle']);
    expect((await store.listDue({ actions: ['forget'] })).due.map((d) => d.signRef)).toEqual(['completed-old', 'failed-old']);
    expect((await store.listDue({ idleSeconds: 45 })).due).toHaveLength(5); // FileSessionStore's call shape
    await expect(store.listDue({ idleSeconds: 10 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'idleSeconds' } });
    // The one rule: at any time, listDue (SQL over due_at) lists what isDue(record, now) says (JavaScript), no more, no less.
    for (const offset of [-400_000, -1_000, 0, 4_000, 6_000, 11_000, 40_000, 200_000, 400_000, day * 1000, 8 * day * 1000]) {
      const now = T + offset;
      const all = ['continueCertificate', 'submitHash', 'finish', 'expire', 'forget'] as const;
      const listed = (await store.listDue({ now, actions: [...all] })).due.map((d) => d.signRef).sort();
      expect([offset, listed]).toEqual([offset, records.filter((r) => isDue(r, now, { idleMs: 45_000 })).map((r) => r.state.signRef).sort()]);
    }
    // a save moves a record's due time with it (signed → completed: nothing due until the retention)
    const signed = records.find((r) => r.state.signRef === 'signed-idle')!;
    await store.save({ ...signed, state: { ...signed.state, status: 'completed', updatedAt: t }, revision: 6 } as SessionRecord, 5);
    expect((await store.listDue()).due.map((d) => d.signRef)).not.toContain('signed-idle');
    // a row that is not a record is reported, not thrown
    await sql(`INSERT INTO due_sessions (sign_ref, revision, status, next_action, due_at, updated_at, record, phase) VALUES ('broken', 1, 'x', 'expire', 0, now(), '{"not": "a record"}', 'x')`);
    expect(await store.listDue()).toMatchObject({ unreadable: ['broken'] });
  });

  it('listDue finds due sessions through the due_at index, not a scan of the table (20 000 waiting sessions, 3 due)', async () => {
    // Statistics are counted per backend and published when it is idle or exits: every connection that touched the
    // table is closed before each reading, so the counts are final.
    const setup = open('idx_', { now: () => T });
    await setup.migrate();
    for (const r of fixtures().filter((x) => ['waiting-past', 'submitted-past', 'savepoint-idle'].includes(x.state.signRef))) await setup.save(r, undefined);
    const filler = new Client({ connectionString: pg.url, application_name: 'idx-setup' });
    await filler.connect();
    // filler rows (not due for years) written in bulk: the query must not read them
    await filler.query(`INSERT INTO idx_sessions (sign_ref, revision, status, next_action, due_at, updated_at, record, phase)
      SELECT 'filler-' || i, 1, 'waiting_for_scan', 'expire', $1::bigint + i, now(), '{}'::jsonb, 'waitingForScan' FROM generate_series(1, 20000) i`, [T + 1e11]);
    await filler.query('ANALYZE idx_sessions');
    await filler.end();
    await setup.close();
    const stats = async () => (await sql<{ idx: string; seq: string }>(`SELECT idx_scan AS idx, seq_scan AS seq FROM pg_stat_user_tables WHERE relname = 'idx_sessions'`))[0]!;
    const settled = async () => {
      await waitFor(async () => (await sql(`SELECT 1 FROM pg_stat_activity WHERE application_name IN ('idx-setup', 'singpass-flows session store')`)).length === 0, 'the connections to end');
      let last = JSON.stringify(await stats());
      for (;;) { // unchanged for over a second: nothing pending any more
        await new Promise((r) => setTimeout(r, 1200));
        const now = JSON.stringify(await stats());
        if (now === last) return JSON.parse(now) as { idx: string; seq: string };
        last = now;
      }
    };
    const before = await settled();
    const probe = new PgSessionStore(pg.url, { tablePrefix: 'idx_', now: () => T });
    expect((await probe.listDue()).due.map((d) => d.signRef)).toEqual(['submitted-past', 'savepoint-idle', 'waiting-past']);
    await probe.close();
    const after = await settled();
    expect(Number(after.idx)).toBeGreaterThan(Number(before.idx));
    expect(Number(after.seq)).toBe(Number(before.seq));
  }, 60_000);

  it('claimDue: two processes\' pools claiming at once get disjoint sessions; a lease hides a session until it ends, a save or releaseClaim ends it', async () => {
    const a = open('claim_', { now: () => T });
    const b = open('claim_', { now: () => T });
    for (let i = 0; i < 30; i++) await a.save(record(`s-${String(i).padStart(2, '0')}`, 1, { expiresAt: t - 10 - i, updatedAt: t - 400 }), undefined);
    // many small claims in parallel from both stores: every due session claimed exactly once
    const claims = await Promise.all(Array.from({ length: 12 }, (_, k) => (k % 2 ? a : b).claimDue({ owner: `p${k % 2}`, limit: 4 })));
    const claimed = claims.flatMap((c) => c.due.map((d) => d.signRef));
    expect(claimed.length).toBe(30);
    expect(new Set(claimed).size).toBe(30);
    for (const c of claims) for (const d of c.due) expect(d).toMatchObject({ action: 'expire', leaseUntil: T + SESSION_POLICY.leaseMs });
    expect((await a.claimDue({ owner: 'p0' })).due).toEqual([]);
    // listDue is a view: leases do not hide sessions from it
    expect((await a.listDue()).due).toHaveLength(30);
    // after the lease: claimable again
    expect((await a.claimDue({ owner: 'p0', now: T + SESSION_POLICY.leaseMs, limit: 100 })).due).toHaveLength(30);
    // releaseClaim ends one's own lease only; a save ends any lease (the claimed step moved the record on)
    expect(await b.releaseClaim('s-00', 'p1')).toBe(false);
    expect(await a.releaseClaim('s-00', 'p0')).toBe(true);
    const s01 = (await a.get('s-01'))!;
    expect((await a.save({ ...s01, revision: 2 }, 1)).saved).toBe(true);
    expect((await b.claimDue({ owner: 'p1', now: T + SESSION_POLICY.leaseMs + 1, limit: 100 })).due.map((d) => d.signRef)).toEqual(['s-01', 's-00']);
    await expect(a.claimDue({ owner: '' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('cleanUp deletes ended sessions past the retention with their PDFs and old PDFs without a record, in one statement; keeps the rest', async () => {
    const store = open('clean_', { now: () => T });
    const pdf = Buffer.from('%PDF');
    for (const [ref, phase, age] of [
      ['old-completed', 'completed', 8 * day], ['old-failed', 'failed', 8 * day], ['old-expired', 'expired', 30 * day],
      ['new-completed', 'completed', 1 * day], ['old-live', 'submitted', 8 * day], ['old-waiting', 'waiting', 8 * day],
    ] as const) {
      await store.save(record(ref, 1, { phase, updatedAt: t - age }), undefined, { document: pdf });
    }
    await store.putDocument('orphan', pdf);
    await sql(`UPDATE clean_documents SET written_at = now() - interval '8 days' WHERE sign_ref = 'orphan'`);
    await store.putDocument('recent-orphan', pdf);
    // signed PDFs go with their ended record; the new one stays
    await store.putSignedDocument('old-completed', Buffer.from('%PDF signed'));
    await store.putSignedDocument('new-completed', Buffer.from('%PDF signed new'));
    // kept deliveries go with their ended record, and without a record once past the retention; the live one stays
    await store.rememberDelivery(delivery('old-completed', 'signature'));
    await store.rememberDelivery(delivery('old-live', 'certificate'));
    await store.rememberDelivery(delivery('gone-long-ago', 'certificate'));
    await store.rememberDelivery(delivery('gone-recently', 'certificate'));
    await sql(`UPDATE clean_deliveries SET received_at = received_at - ${8 * day * 1000} WHERE sign_ref = 'gone-long-ago'`);
    expect((await store.getSignedDocument('old-completed'))?.toString()).toBe('%PDF signed');
    expect(await store.getSignedDocument('old-live')).toBeUndefined();
    const r = await store.cleanUp({ retentionSeconds: 7 * day });
    expect(r).toEqual({ deleted: ['old-completed', 'old-expired', 'old-failed'], documents: 3, signedDocuments: 1, orphanDocuments: 1, tempFiles: 0, kept: 3, unreadable: [] });
    expect(await store.getSignedDocument('old-completed')).toBeUndefined();
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'gone-recently', type: 'certificate' }, { signRef: 'old-live', type: 'certificate' }]);
    expect((await store.getSignedDocument('new-completed'))?.toString()).toBe('%PDF signed new');
    expect(await store.list()).toEqual(['new-completed', 'old-live', 'old-waiting']);
    expect((await sql<{ sign_ref: string }>('SELECT sign_ref FROM clean_documents ORDER BY sign_ref')).map((x) => x.sign_ref)).toEqual(['new-completed', 'old-live', 'old-waiting', 'recent-orphan']);
    expect(await store.cleanUp({ retentionSeconds: 7 * day })).toEqual({ deleted: [], documents: 0, signedDocuments: 0, orphanDocuments: 0, tempFiles: 0, kept: 3, unreadable: [] });
    await expect(store.cleanUp({ retentionSeconds: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('cleanUp deletes by the stored forget step (next_action, due_at), with the retention of the store policy; a retention given shifts it', async () => {
    const store = open('forget_', { now: () => T, policy: { retentionMs: 1 * day * 1000 } });
    const long = open('forget_', { now: () => T, policy: { retentionMs: 30 * day * 1000 } });
    await store.save(record('short-old', 1, { phase: 'completed', updatedAt: t - 2 * day }), undefined);
    await store.save(record('short-new', 1, { phase: 'failed', updatedAt: t - 3600 }), undefined);
    // written by a process whose policy keeps ended sessions 30 days: its stored due time says so
    await long.save(record('long-old', 1, { phase: 'expired', updatedAt: t - 2 * day }), undefined);
    await store.save(record('live-old', 1, { phase: 'submitted', updatedAt: t - 40 * day }), undefined);
    expect((await sql<{ sign_ref: string; next_action: string }>(`SELECT sign_ref, next_action FROM forget_sessions ORDER BY sign_ref`)).map((r) => `${r.sign_ref}:${r.next_action}`))
      .toEqual(['live-old:expire', 'long-old:forget', 'short-new:forget', 'short-old:forget']);
    expect((await store.cleanUp()).deleted).toEqual(['short-old']);
    expect(await store.list()).toEqual(['live-old', 'long-old', 'short-new']);
    // a node's own retention (here: ended an hour ago or more) applies to the same stored due times
    expect((await store.cleanUp({ retentionSeconds: 3000 })).deleted).toEqual(['short-new']);
    expect((await long.cleanUp({ retentionSeconds: 1 * day })).deleted).toEqual(['long-old']);
    expect(await store.list()).toEqual(['live-old']);
    // the statement uses the forget index (seq scans off: the planner's choice on a tiny table is not the point)
    const c = await admin.connect();
    try {
      await c.query('SET enable_seqscan = off');
      const plan = (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN DELETE FROM forget_sessions WHERE next_action = 'forget' AND due_at <= 1`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('forget_sessions_forget');
    } finally {
      c.release();
    }
  });

  it('listDue with a retention first deletes the ended sessions past it, with their PDFs, signed PDFs and deliveries (one statement); without one it deletes nothing', async () => {
    const store = open('listret_', { now: () => T });
    const pdf = Buffer.from('%PDF');
    for (const [ref, phase, age] of [
      ['old-completed', 'completed', 8 * day], ['old-failed', 'failed', 30 * day], ['new-expired', 'expired', 1 * day], ['old-submitted', 'submitted', 8 * day],
    ] as const) {
      await store.save(record(ref, 1, { phase, updatedAt: t - age }), undefined, { document: pdf });
    }
    await store.putSignedDocument('old-completed', Buffer.from('%PDF signed'));
    await store.rememberDelivery(delivery('old-completed', 'signature'));
    await store.rememberDelivery(delivery('old-submitted', 'certificate'));
    expect((await store.listDue()).deleted).toEqual([]);
    expect(await store.list()).toEqual(['new-expired', 'old-completed', 'old-failed', 'old-submitted']);

    const r = await store.listDue({ retentionSeconds: 7 * day });
    expect(r.deleted).toEqual(['old-completed', 'old-failed']);
    // the live session is still listed as due (its deadline passed)
    expect(r.due.map((d) => d.signRef)).toEqual(['old-submitted']);
    expect(await store.list()).toEqual(['new-expired', 'old-submitted']);
    expect(await store.getSignedDocument('old-completed')).toBeUndefined();
    expect((await sql<{ sign_ref: string }>('SELECT sign_ref FROM listret_documents ORDER BY sign_ref')).map((x) => x.sign_ref)).toEqual(['new-expired', 'old-submitted']);
    expect((await sql<{ sign_ref: string }>('SELECT sign_ref FROM listret_deliveries ORDER BY sign_ref')).map((x) => x.sign_ref)).toEqual(['old-submitted']);
    await expect(store.listDue({ retentionSeconds: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

/** A verified delivery as checkDelivery gives it (a certificate event carries the user's certificate, DER and base64). */
function delivery(signRef: string, type: 'certificate' | 'signature' | 'error', token = 'sfn1_x_y'): VerifiedDelivery {
  const der = randomBytes(40);
  const event = type === 'certificate'
    ? { type, signRef, issuedAt: 1, nonce: 'nonce-1', certificate: { der, base64: der.toString('base64'), subject: 'CN=User', issuer: 'CN=CA', serialNumber: '01', notBefore: 'a', notAfter: 'b', publicKeyAlgorithm: 'EC' } }
    : type === 'signature' ? { type, signRef, issuedAt: 2, documentHash: 'ab'.repeat(32), signature: 'c2ln' }
      : { type, signRef, issuedAt: 3, errorCode: 'USER_DECLINED', message: 'declined', correlationId: 'c' };
  return { event, notificationToken: token } as unknown as VerifiedDelivery;
}

describe('PgSessionStore: kept webhook deliveries', () => {
  it('remember keeps one per session and event type (a second copy is a duplicate); get restores the certificate bytes; markDeliveryApplied drops them', async () => {
    const store = open('dlv_', { now: () => 1_000_000 });
    const cert = delivery('d-1', 'certificate');
    expect(await store.rememberDelivery(cert)).toBe(true);
    expect(await store.rememberDelivery(delivery('d-1', 'certificate', 'another-copy'))).toBe(false);
    expect(await store.rememberDelivery(delivery('d-1', 'signature'))).toBe(true);
    const kept = (await store.getDelivery('d-1', 'certificate'))!;
    expect(kept).toMatchObject({ type: 'certificate', applied: false, receivedAt: 1_000_000, delivery: { notificationToken: 'sfn1_x_y' } });
    const c = kept.delivery.event as Extract<VerifiedDelivery['event'], { type: 'certificate' }>;
    expect(Buffer.isBuffer(c.certificate.der) && c.certificate.der.equals((cert.event as typeof c).certificate.der)).toBe(true);
    // the DER bytes are not stored as JSON numbers: only base64
    const raw = await sql<{ delivery: { event: { certificate: Record<string, unknown> } } }>(`SELECT delivery FROM dlv_deliveries WHERE sign_ref = 'd-1' AND type = 'certificate'`);
    expect(raw[0]!.delivery.event.certificate).not.toHaveProperty('der');
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'd-1', type: 'certificate' }, { signRef: 'd-1', type: 'signature' }]);

    await store.markDeliveryApplied('d-1', 'certificate');
    const applied = (await store.getDelivery('d-1', 'certificate'))!;
    expect(applied.applied).toBe(true);
    expect((applied.delivery.event as typeof c).certificate).toMatchObject({ base64: '', subject: '' });
    expect(JSON.stringify(await sql(`SELECT delivery FROM dlv_deliveries`))).not.toContain((cert.event as typeof c).certificate.base64);
    expect(await store.rememberDelivery(cert)).toBe(false); // still known: a late copy is not news
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 'd-1', type: 'signature' }]);
    expect(await store.getDelivery('d-1', 'error')).toBeUndefined();
    await store.forgetDeliveries('d-1');
    expect(await store.getDelivery('d-1', 'signature')).toBeUndefined();
    expect(await store.pendingDeliveries()).toEqual([]);
    await expect(store.getDelivery('d-1', 'other' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.rememberDelivery({} as VerifiedDelivery)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('the same event remembered by 3 processes at once (8 copies each): exactly one copy is fresh', async () => {
    const store = open('dlvrace_');
    await store.migrate();
    const refs = Array.from({ length: 10 }, (_, i) => `dr-${i}`);
    const body = `const refs = JSON.parse(process.env.REFS);
      process.stdout.write('ready\\n'); await new Promise((r) => process.stdin.once('data', r));
      const results = await Promise.all(refs.flatMap((ref) => Array.from({ length: 8 }, () => store.rememberDelivery({
        event: { type: 'certificate', signRef: ref, issuedAt: 1, nonce: 'n', certificate: { der: Buffer.from('x'), base64: 'eA==' } }, notificationToken: 't' })
        .then((fresh) => ({ ref, fresh })))));
      process.stdout.write(JSON.stringify(results));`;
    const go: NodeJS.WritableStream[] = [];
    let release!: () => void;
    const allReady = new Promise<void>((r) => (release = r));
    const runs = ['a', 'b', 'c'].map(() => child(body, { PREFIX: 'dlvrace_', REFS: JSON.stringify(refs) }, (out, stdin) => {
      if (out === 'ready\n' && go.push(stdin) === 3) release();
    }));
    await allReady;
    for (const s of go) s.end('go\n');
    const results = (await Promise.all(runs)).flatMap((o) => JSON.parse(o.slice('ready\n'.length)) as { ref: string; fresh: boolean }[]);
    expect(results).toHaveLength(3 * 10 * 8);
    for (const ref of refs) expect(results.filter((r) => r.ref === ref && r.fresh)).toHaveLength(1);
    expect(await store.pendingDeliveries()).toHaveLength(10);
  }, 60_000);

  it('claimDeliveries: only deliveries pending for idleMs; two stores claiming at once get disjoint ones; a lease hides them until it ends; applied ones never come back', async () => {
    let now = 5_000_000;
    const a = open('dlvclaim_', { now: () => now });
    const b = open('dlvclaim_', { now: () => now });
    for (let i = 0; i < 20; i++) await a.rememberDelivery(delivery(`c-${String(i).padStart(2, '0')}`, i % 2 ? 'signature' : 'certificate'));
    now += 4_000;
    await a.rememberDelivery(delivery('c-fresh', 'certificate'));
    expect(await a.claimDeliveries({ owner: 'a', idleMs: 10_000 })).toEqual([]); // none idle long enough
    now += 6_000;
    const claims = await Promise.all(Array.from({ length: 8 }, (_, k) => (k % 2 ? a : b).claimDeliveries({ owner: k % 2 ? 'a' : 'b', idleMs: 10_000, limit: 3 })));
    const claimed = claims.flat().map((d) => d.delivery.event.signRef);
    expect(claimed).toHaveLength(20);
    expect(new Set(claimed).size).toBe(20);
    expect(claimed).not.toContain('c-fresh'); // received 6 s ago
    const cert = claims.flat().find((d) => d.type === 'certificate')!;
    expect(Buffer.isBuffer((cert.delivery.event as { certificate: { der: Buffer } }).certificate.der)).toBe(true);
    expect(await a.claimDeliveries({ owner: 'a', idleMs: 10_000 })).toEqual([]); // leased
    await a.markDeliveryApplied('c-00', 'certificate');
    now += SESSION_POLICY.leaseMs;
    const again = await b.claimDeliveries({ owner: 'b', idleMs: 10_000, limit: 100 });
    expect(again.map((d) => d.delivery.event.signRef)).toEqual([...claimed.filter((r) => r !== 'c-00')].sort().concat('c-fresh'));
    await expect(a.claimDeliveries({ owner: '', idleMs: 1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(a.claimDeliveries({ owner: 'a', idleMs: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a save that moves the session past a kept event marks it applied in the same statement (certificate dropped); events still needed stay pending; a refused save marks nothing', async () => {
    const store = open('dlvsave_');
    const at = Math.floor(Date.now() / 1000);
    expect(await store.put(record('s-1', 1, { phase: 'waiting', updatedAt: at }), undefined)).toBe(true);
    await store.rememberDelivery(delivery('s-1', 'certificate'));
    await store.rememberDelivery(delivery('s-1', 'error'));
    expect(await store.put(record('s-1', 3, { phase: 'savePoint', updatedAt: at }), 2)).toBe(false); // refused
    expect((await store.getDelivery('s-1', 'certificate'))?.applied).toBe(false);
    expect(await store.put(record('s-1', 2, { phase: 'savePoint', updatedAt: at }), 1)).toBe(true);
    const cert = await store.getDelivery('s-1', 'certificate');
    expect(cert?.applied).toBe(true);
    expect((cert!.delivery.event as { certificate: { base64: string } }).certificate.base64).toBe('');
    expect((await store.getDelivery('s-1', 'error'))?.applied).toBe(false); // the session can still end with an error
    expect(await store.pendingDeliveries()).toEqual([{ signRef: 's-1', type: 'error' }]);
  });

  it('claimDeliveriesToReplay: by the store\'s idle time, only what the session still needs (with its record); the rest marked applied (the certificate dropped), never claimed again', async () => {
    let now = 7_000_000;
    const store = open('dlvreplay_', { now: () => now, idleMs: 10_000 });
    const at = Math.floor(now / 1000);
    const cases: Array<[string, Phase, 'certificate' | 'signature' | 'error', boolean]> = [
      ['r-wait-cert', 'waiting', 'certificate', true], // n8n lost the run that had the certificate: replay
      ['r-saved-cert', 'savePoint', 'certificate', false], // prepared: the record's own next step resends the hash
      ['r-claimed-cert', 'claimed', 'certificate', false], // claimed: continueCertificate
      ['r-sub-sig', 'submitted', 'signature', true],
      ['r-signed-sig', 'signed', 'signature', false],
      ['r-wait-err', 'waiting', 'error', true],
      ['r-done-err', 'failed', 'error', false],
      ['r-gone-cert', 'waiting', 'certificate', false], // no record
    ];
    for (const [ref, phase, type] of cases) {
      if (ref !== 'r-gone-cert') expect(await store.put(record(ref, 1, { phase, updatedAt: at }), undefined)).toBe(true);
      await store.rememberDelivery(delivery(ref, type));
    }
    expect(await store.claimDeliveriesToReplay({ owner: 'a' })).toEqual([]); // not idle 10 s yet
    now += 10_000;
    const replays = await store.claimDeliveriesToReplay({ owner: 'a' });
    expect(replays.map((r) => [r.kept.delivery.event.signRef, r.kept.type, r.record.state.signRef]).sort()).toEqual(
      cases.filter((c) => c[3]).map(([ref, , type]) => [ref, type, ref]).sort());
    expect(replays.every((r) => !r.kept.applied)).toBe(true);
    for (const [ref, , type, needed] of cases) {
      const kept = await store.getDelivery(ref, type);
      expect([ref, kept?.applied]).toEqual([ref, !needed]);
      if (!needed && type === 'certificate') expect((kept!.delivery.event as { certificate: { base64: string } }).certificate.base64).toBe('');
    }
    // leased to a; once the lease is over, still needed ones come back (the replay failed too), the others never
    expect(await store.claimDeliveriesToReplay({ owner: 'b' })).toEqual([]);
    now += 60_000;
    expect((await store.claimDeliveriesToReplay({ owner: 'b' })).map((r) => r.kept.delivery.event.signRef).sort()).toEqual(cases.filter((c) => c[3]).map((c) => c[0]).sort());
  });
});

describe('PgSessionStore: migrations', () => {
  it('are idempotent: again, and from a new store on the same tables, nothing changes and the data stays', async () => {
    const store = open('mig_');
    expect(await store.migrate()).toEqual({ from: 0, to: 4 });
    expect(await store.migrate()).toEqual({ from: 4, to: 4 });
    await store.save(record('keep', 1), undefined);
    const again = open('mig_');
    expect(await again.migrate()).toEqual({ from: 4, to: 4 });
    expect((await again.get('keep'))!.revision).toBe(1);
    expect(await sql('SELECT version FROM mig_schema_version')).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
    // tables a newer package migrated: refused, typed, not touched
    await sql('INSERT INTO mig_schema_version (version) VALUES (99)');
    const old = open('mig_');
    await expect(old.get('keep')).rejects.toMatchObject({ code: 'STORE_FAILED', details: { retryable: false, schemaVersion: 99 } });
  });

  it('from schema 2 (no phase): rows written as the previous version wrote them get the phase their fields describe, in the column and the record, and continue', async () => {
    const fixtures = path.join(__dirname, '../fixtures/session-records/v1');
    const files = readdirSync(fixtures).filter((f) => f.endsWith('.json'));
    const old = open('phasemig_');
    expect(await old.migrate({ to: 2 })).toEqual({ from: 0, to: 2 });
    // one session may have been captured at several phases: each file gets a sign_ref of its own here
    const load = (f: string): SessionRecord => {
      const r = JSON.parse(readFileSync(path.join(fixtures, f), 'utf8')) as SessionRecord;
      return { ...r, state: { ...r.state, signRef: `mig-${f.replace(/\.json$/, '')}` } };
    };
    for (const f of files) {
      const r = load(f);
      const step = nextStep(r, { idleMs: 30_000 });
      // the previous version's INSERT, column for column
      await sql(`INSERT INTO phasemig_sessions (sign_ref, revision, status, next_action, due_at, updated_at, record)
        VALUES ($1, $2, $3, $4, $5, to_timestamp($6), $7::jsonb)`, [r.state.signRef, r.revision, r.state.status, step.action, Number.isFinite(step.at) ? Math.ceil(step.at) : null, r.state.updatedAt, JSON.stringify(r)]);
    }
    const store = open('phasemig_');
    expect(await store.migrate()).toEqual({ from: 2, to: 4 });
    const rows = await sql<{ phase: string; record_phase: string; status: string; sign_ref: string }>(`SELECT sign_ref, status, phase, record->>'phase' AS record_phase FROM phasemig_sessions`);
    expect(rows).toHaveLength(files.length);
    for (const f of files) {
      const r = load(f);
      const want = f.replace(/(-deferred)?\.json$/, '');
      const row = rows.find((x) => x.sign_ref === r.state.signRef)!;
      expect({ f, phase: row.phase, inRecord: row.record_phase }).toEqual({ f, phase: want, inRecord: want });
      const loaded = (await store.get(r.state.signRef))!;
      expect(loaded.phase).toBe(want);
      // and it continues: a compare-and-set save against the migrated revision
      expect((await store.save({ ...loaded, revision: loaded.revision + 1 }, loaded.revision)).saved).toBe(true);
    }
  });

  it('from schema 3: the ended-sessions index by status gives way to the forget index; rows keep their stored due times and are cleaned up by them', async () => {
    const T = Math.floor(Date.now() / 1000) * 1000;
    const t = T / 1000;
    const day = 86_400;
    const old = open('forgetmig_', { now: () => T, autoMigrate: false });
    expect(await old.migrate({ to: 3 })).toEqual({ from: 0, to: 3 });
    await old.save(record('ended-old', 1, { phase: 'completed', updatedAt: t - 8 * day }), undefined);
    await old.save(record('ended-new', 1, { phase: 'completed', updatedAt: t - 1 * day }), undefined);
    const names = async () => (await sql<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'forgetmig_sessions' ORDER BY indexname`)).map((r) => r.indexname);
    expect(await names()).toContain('forgetmig_sessions_ended');
    const store = open('forgetmig_', { now: () => T });
    expect(await store.migrate()).toEqual({ from: 3, to: 4 });
    expect(await names()).toEqual(['forgetmig_sessions_due_at', 'forgetmig_sessions_forget', 'forgetmig_sessions_pkey']);
    expect((await store.cleanUp()).deleted).toEqual(['ended-old']);
  });

  it('from schema 3: records of the version before the hand-over (phase stored, no hand-over) load as they were: a completed one is not handed over again, a signed one finishes into it', async () => {
    const clock = { now: Date.now() };
    const store = open('v2mig_', { now: () => clock.now });
    const { driven } = await expectPreviousVersionRecordsContinue({
      store, clock,
      // that version's schema (3) and its INSERT, column for column: the record with its phase, the due rule's columns
      write: async (records) => {
        const old = open('v2mig_', { autoMigrate: false });
        expect(await old.migrate({ to: 3 })).toEqual({ from: 0, to: 3 });
        for (const { record: r, pdf } of records) {
          const step = nextStep(r, dueRule(SESSION_POLICY));
          await sql(`INSERT INTO v2mig_sessions (sign_ref, revision, status, next_action, due_at, updated_at, record, phase)
            VALUES ($1, $2, $3, $4, $5, to_timestamp($6), $7::jsonb, $8)`, [r.state.signRef, r.revision, r.state.status, step.action, Number.isFinite(step.at) ? Math.ceil(step.at) : null, r.state.updatedAt, JSON.stringify(r), r.phase]);
          if (pdf) await sql('INSERT INTO v2mig_documents (sign_ref, pdf) VALUES ($1, $2)', [r.state.signRef, pdf]);
        }
        expect(await store.migrate()).toEqual({ from: 3, to: 4 });
        // the rows keep their phase and due columns: nothing to rewrite for them
        const rows = await sql<{ sign_ref: string; phase: string; record_phase: string; next_action: string }>(`SELECT sign_ref, phase, record->>'phase' AS record_phase, next_action FROM v2mig_sessions`);
        expect(rows.map((x) => [x.sign_ref, x.phase, x.record_phase, x.next_action]).sort()).toEqual(records.map(({ record: r }) => [r.state.signRef, r.phase, r.phase, nextStep(r).action]).sort());
      },
    });
    // clean-up took the signed PDFs with their sessions
    for (const signRef of driven) expect(await store.getSignedDocument(signRef)).toBeUndefined();
    expect(await sql('SELECT sign_ref FROM v2mig_signed_documents')).toEqual([]);
  });

  it('two stores (two pools) starting at once: both wait for the advisory lock, one migrates, the other finds the schema current', async () => {
    const a = open('lock_');
    const b = open('lock_');
    // hold the migration lock from outside: both must wait for it (not race to create the tables)
    const holder = new Client({ connectionString: pg.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [a.migrationLockKey]);
      const settled: string[] = [];
      const both = Promise.all([a.migrate().then((r) => (settled.push('a'), r)), b.migrate().then((r) => (settled.push('b'), r))]);
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toEqual([]);
      expect(await sql(`SELECT to_regclass('lock_sessions') AS t`)).toEqual([{ t: null }]);
      await holder.query('SELECT pg_advisory_unlock($1::bigint)', [a.migrationLockKey]);
      const results = await both;
      expect(results.map((r) => r.from).sort()).toEqual([0, 4]);
      expect(results.every((r) => r.to === 4)).toBe(true);
    } finally {
      await holder.end();
    }
    expect(await sql('SELECT version FROM lock_schema_version')).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
    // and with no gate: two more pools on fresh tables, at once
    const c = open('lock2_');
    const d = open('lock2_');
    const [rc, rd] = await Promise.all([c.save(record('x', 1), undefined), d.save(record('y', 1), undefined)]);
    expect(rc.saved && rd.saved).toBe(true);
    expect(await sql('SELECT version FROM lock2_schema_version')).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
  });

  it('two child processes starting at once on fresh tables: both succeed, exactly one migrates', async () => {
    const go: NodeJS.WritableStream[] = [];
    let ready = 0;
    let release!: () => void;
    const allReady = new Promise<void>((r) => (release = r));
    const body = `process.stdout.write('ready\\n'); await new Promise((r) => process.stdin.once('data', r));
      process.stdout.write(JSON.stringify(await store.migrate()));`;
    const runs = [0, 1].map(() => child(body, { PREFIX: 'procmig_' }, (out, stdin) => {
      if (out === 'ready\n') {
        go.push(stdin);
        if (++ready === 2) release();
      }
    }));
    await allReady;
    for (const s of go) s.end('go\n');
    const results = (await Promise.all(runs)).map((o) => JSON.parse(o.slice('ready\n'.length)) as { from: number; to: number });
    expect(results.map((r) => r.from).sort()).toEqual([0, 4]);
    expect(await sql('SELECT version FROM procmig_schema_version')).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
  }, 60_000);
});

describe('PgSessionStore: processes and faults', () => {
  it('N concurrent saves with the same expected revision from 3 processes: exactly one wins per record, the others are conflicts', async () => {
    const store = open('xrace_');
    const refs = Array.from({ length: 10 }, (_, i) => `xr-${i}`);
    for (const ref of refs) await store.save(record(ref, 1), undefined);
    const template = record('TEMPLATE', 2);
    const body = `const refs = JSON.parse(process.env.REFS); const template = JSON.parse(process.env.TEMPLATE);
      await store.migrate(); process.stdout.write('ready\\n'); await new Promise((r) => process.stdin.once('data', r));
      const results = await Promise.all(refs.flatMap((ref) => Array.from({ length: 8 }, (_, k) => {
        const mark = process.env.NAME + '-' + k;
        const r = { ...template, state: { ...template.state, signRef: ref }, request: { ...template.request, documentName: mark } };
        return store.save(r, 1).then((o) => ({ ref, mark, saved: o.saved, reason: o.reason, storedRevision: o.storedRevision }));
      })));
      process.stdout.write(JSON.stringify(results));`;
    const go: NodeJS.WritableStream[] = [];
    let release!: () => void;
    const allReady = new Promise<void>((r) => (release = r));
    const runs = ['a', 'b', 'c'].map((name) => child(body, { PREFIX: 'xrace_', REFS: JSON.stringify(refs), TEMPLATE: JSON.stringify(template), NAME: name }, (out, stdin) => {
      if (out === 'ready\n' && go.push(stdin) === 3) release();
    }));
    await allReady;
    for (const s of go) s.end('go\n'); // all at once
    const results = (await Promise.all(runs)).flatMap((o) => JSON.parse(o.slice('ready\n'.length)) as { ref: string; mark: string; saved: boolean; reason?: string; storedRevision?: number }[]);
    expect(results).toHaveLength(3 * 10 * 8);
    for (const ref of refs) {
      const mine = results.filter((r) => r.ref === ref);
      const winners = mine.filter((r) => r.saved);
      expect(winners).toHaveLength(1);
      for (const l of mine.filter((r) => !r.saved)) expect(l).toMatchObject({ reason: 'conflict', storedRevision: 2 });
      expect((await store.get(ref))!.request.documentName).toBe(winners[0]!.mark);
    }
  }, 60_000);

  it('4 processes each loading and saving revision+1 in a loop: every revision is written by exactly one of them, no save lost', async () => {
    const store = open('xloop_');
    await store.save(record('shared', 1, { mark: 'start' }), undefined);
    const body = `let wins = 0, refused = 0;
      for (let k = 0; k < 25; k++) {
        const r = await store.get('shared');
        const o = await store.save({ ...r, revision: r.revision + 1, request: { ...r.request, documentName: r.request.documentName + '|' + process.env.NAME } }, r.revision);
        o.saved ? wins++ : refused++;
      }
      process.stdout.write(JSON.stringify({ wins, refused }));`;
    const results = (await Promise.all(['a', 'b', 'c', 'd'].map((name) => child(body, { PREFIX: 'xloop_', NAME: name })))).map((o) => JSON.parse(o) as { wins: number; refused: number });
    const wins = results.reduce((n, r) => n + r.wins, 0);
    const final = (await store.get('shared'))!;
    expect(final.revision).toBe(1 + wins);
    expect(final.request.documentName.split('|')).toHaveLength(1 + wins);
    expect(results.reduce((n, r) => n + r.wins + r.refused, 0)).toBe(100);
  }, 60_000);

  it('PostgreSQL restarted under a live pool: calls during the outage fail typed (STORE_BUSY, retryable), the next call after the restart works', async () => {
    const store = open('restart_', { now: () => Date.now() });
    await store.save(record('before', 1), undefined, { document: Buffer.from('%PDF-before') });
    // a statement running when the server shuts down: the store's migration of other tables, held at the lock
    const blocked = open('restart2_');
    const holder = new Client({ connectionString: pg.url });
    holder.on('error', () => undefined);
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1::bigint)', [blocked.migrationLockKey]);
    const cutOff = blocked.migrate().then(() => 'migrated', (e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    await pg.halt(); // fast shutdown: sessions terminated (57P01), then the port is closed
    try {
      const during = await Promise.allSettled([store.get('before'), store.save(record('during', 1), undefined), store.getDocument('before'), store.listDue(), store.cleanUp({ retentionSeconds: 1 })]);
      for (const d of during) {
        expect(d.status).toBe('rejected');
        const e = (d as PromiseRejectedResult).reason as unknown;
        expect(isSingpassFlowsError(e, 'STORE_BUSY')).toBe(true);
        expect(e).toMatchObject({ details: { retryable: true } });
      }
      const e = await cutOff;
      expect(isSingpassFlowsError(e, 'STORE_BUSY')).toBe(true);
      expect(e).toMatchObject({ details: { retryable: true, sqlState: expect.stringMatching(/^57P01$|^08/) as string } });
      expect(store.lastPoolError).toMatch(/terminat/i); // the pool's idle connection was cut: reported, no crash
    } finally {
      await holder.end().catch(() => undefined);
      await pg.start();
    }
    // the same store (the same pool) works again: new connections
    expect((await store.get('before'))!.revision).toBe(1);
    expect((await store.getDocument('before'))!.toString()).toBe('%PDF-before');
    expect((await store.save(record('after', 1), undefined)).saved).toBe(true);
    expect(await store.list()).toEqual(['after', 'before']);
    expect(await blocked.migrate()).toEqual({ from: 0, to: 4 });
  }, 90_000);

  it('an unreachable or silent server fails typed within the connect timeout, and no message ever carries the password', async () => {
    const password = 'S3cret-pass@word/x';
    const closedPort = await freePort();
    const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${closedPort}/singpass`;
    const refused = new PgSessionStore(url, { tablePrefix: 'unreach_' });
    stores.push(refused);
    const e1 = await refused.get('x').catch((e: unknown) => e);
    expect(e1).toMatchObject({ code: 'STORE_BUSY', details: { retryable: true, errno: 'ECONNREFUSED', phase: 'connect' } });
    // a server that accepts the connection and never answers: the pool's connect timeout
    const sockets: net.Socket[] = [];
    const silent = net.createServer((sock) => void sockets.push(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const slow = new PgSessionStore({ connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/singpass`, connectionTimeoutMillis: 500 }, { tablePrefix: 'unreach_' });
      stores.push(slow);
      const t0 = Date.now();
      const e2 = await slow.list().catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(e2).toMatchObject({ code: 'STORE_BUSY', details: { retryable: true } });
      expect((e2 as Error).message).toMatch(/timed out|timeout/i);
      // a wrong password against the real server (scram over TCP): STORE_FAILED, not retryable
      const wrong = new PgSessionStore(pg.url.replace(`:${pg.password}@`, `:${encodeURIComponent(password)}@`), { tablePrefix: 'unreach_' });
      stores.push(wrong);
      const e3 = await wrong.list().catch((e: unknown) => e);
      expect(e3).toMatchObject({ code: 'STORE_FAILED', details: { retryable: false, sqlState: '28P01' } });
      for (const e of [e1, e2, e3]) {
        const text = `${(e as Error).message} ${(e as Error).stack} ${JSON.stringify(e)} ${String((e as Error).cause)}`;
        for (const secret of [password, encodeURIComponent(password), pg.password]) expect(text).not.toContain(secret);
      }
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  }, 30_000);

  it('a pool passed in is used and left open by close(); a closed store refuses calls with STORE_FAILED', async () => {
    const pool = new Pool({ connectionString: pg.url, max: 2 });
    pool.on('error', () => undefined); // the pool is ours: so is handling its idle clients' errors
    try {
      const store = new PgSessionStore(pool, { tablePrefix: 'ownpool_' });
      const outcome: SaveOutcome = await store.save(record('p', 1), undefined);
      expect(outcome.saved).toBe(true);
      await store.close();
      expect((await pool.query('SELECT count(*)::int AS n FROM ownpool_sessions')).rows).toEqual([{ n: 1 }]);
      await expect(store.get('p')).rejects.toMatchObject({ code: 'STORE_FAILED' });
    } finally {
      await pool.end();
    }
  });
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
