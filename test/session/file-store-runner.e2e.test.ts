/**
 * FileSessionStore as the runner's SessionStore (what the CLI or Node-RED would plug in), against the sandbox: a
 * session completes with its record in <signRef>.json, and a restarted runner over a new store on the same folder
 * finishes a session the first one left waiting for the signature.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixture } from '../fixtures/pdfs';
import { FileSessionStore } from '../../src/session';
import { startSessionHarness, until, type SessionHarness } from './harness';

describe('runner over FileSessionStore', () => {
  let h: SessionHarness;
  let dir: string;
  let pdf: Buffer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-runner-files-'));
    pdf = await fixture('classic');
    h = await startSessionHarness({ runner: { store: new FileSessionStore(dir) } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a session completes; the record is plain JSON on disk; a runner restarted over a new store on the folder finishes a waiting session', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Files.pdf', level: 'B-B' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, `${s.signRef}.json`), 'utf8')).state.status).toBe('waiting_for_scan');
    expect(fs.readFileSync(path.join(dir, `${s.signRef}.pdf`))).toEqual(pdf);
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash');
    // The service accepts the hash before the runner has its answer and saves it (fsync, rename): wait for the file.
    const onDisk = () => (JSON.parse(fs.readFileSync(path.join(dir, `${s.signRef}.json`), 'utf8')) as { state: { status: string } }).state.status;
    await until(() => onDisk() === 'hash_submitted', 'the record saved as hash_submitted');
    // "restart": the runner and the store object are new, only the folder is kept
    const store = new FileSessionStore(dir);
    expect((await store.get(s.signRef))!.state.status).toBe('hash_submitted');
    const runner = await h.restartRunner({ engine: h.newEngine(), store });
    await runner.resume();
    await h.sandbox.phone.approve(s.signRef);
    const out = await runner.outcome(s.signRef);
    expect(out.record.state.status).toBe('completed');
    expect(out.pdf).toBeDefined();
    expect(JSON.parse(fs.readFileSync(path.join(dir, `${s.signRef}.json`), 'utf8'))).toMatchObject({ state: { status: 'completed' }, revision: out.record.revision });
    expect(h.hashes.get(s.signRef)).toBe(1);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 90_000);
});
