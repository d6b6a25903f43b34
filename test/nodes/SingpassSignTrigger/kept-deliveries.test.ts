import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { closePgRecordStores, PG_STORE_CREDENTIAL, STORE_CREDENTIAL } from '../../../nodes/shared/record-store';
import { PgSessionStore, type SessionRecord } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { postgresDatabase, type Postgres } from '../../helpers/postgres';
import { executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The Singpass Sign Trigger with the PostgreSQL store (queue mode), over real HTTP from the sandbox and a real
 * PostgreSQL on 127.0.0.1: every genuine delivery is kept in the store before it is answered 200 (n8n creates the
 * execution only after the answer, and may lose it), a copy of a kept event starts nothing, and a kept event no run
 * applied comes back out of List Due Sessions, shaped like the trigger's output, for the same steps.
 */
describe('Singpass Sign Trigger on the PostgreSQL store: deliveries kept before the answer, replayed when no run applied them', () => {
  let env: SignSandbox;
  let pg: Postgres;
  let store: PgSessionStore;
  beforeAll(async () => {
    [env, pg] = await Promise.all([startSignSandbox(), postgresDatabase()]);
    // the one store credential the trigger and every Session Record operation share, its Kind PostgreSQL
    env.credentials[STORE_CREDENTIAL] = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.database, user: pg.user, password: pg.password, idleSeconds: 1 };
    env.triggerParams.sessionRecords = 'store';
    store = new PgSessionStore(pg.url, { idleMs: 1000 }); // the tables the credential's store uses (default prefix)
  }, 120_000);
  afterAll(async () => {
    await closePgRecordStores();
    await store?.close();
    await env?.close();
    await pg?.stop();
  });
  afterEach(() => {
    env.beforeDelivery = undefined;
    env.sb.sign.faults.deliverTwice(false);
  });

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials, typeVersion: 2 }));
  const listDue = async () => (await run({ resource: 'sessionRecord', operation: 'listDue' }))[0].map((i) => i.json);

  /** A session created by the node and saved in the store (Save Record (created)). */
  async function savedSession(): Promise<{ signRef: string; record: SessionRecord; pdf: Buffer }> {
    const pdf = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'K.pdf', level: 'B-B', options: {} }, [pdfItem(pdf)]);
    const record = created.json.record as unknown as SessionRecord;
    expect(await store.put(record, undefined)).toBe(true);
    await store.putDocument(record.state.signRef, pdf);
    return { signRef: record.state.signRef, record, pdf };
  }
  /** The service's answered attempts to deliver `signRef`'s certificate, once `count` of them have their answer. */
  async function certificateAnswers(signRef: string, count: number): Promise<Array<number | undefined>> {
    const answered = () => env.sb.sign.deliveries().filter((d) => d.signRef === signRef && d.requestType === 'user_cert' && d.status !== undefined);
    for (const deadline = Date.now() + 20_000; answered().length < count && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    return answered().map((d) => d.status);
  }
  const firedFor = (signRef: string) => env.fired.filter((outputs) => outputs[0].some((i) => i.json.signRef === signRef));

  it('a genuine delivery is kept (unapplied, with the certificate) and starts the workflow once; the service\'s copy of it is answered 200 and starts nothing', async () => {
    env.sb.sign.faults.deliverTwice(true);
    const s = await savedSession();
    await env.sb.phone.scan(s.signRef, { user: 'p256' });
    expect(await certificateAnswers(s.signRef, 2)).toEqual([200, 200]);
    expect(firedFor(s.signRef)).toHaveLength(1);
    const kept = await store.getDelivery(s.signRef, 'certificate');
    expect(kept).toMatchObject({ applied: false, delivery: { event: { type: 'certificate', signRef: s.signRef } } });
    expect((kept!.delivery.event as { certificate: { der: Buffer } }).certificate.der.length).toBeGreaterThan(100);
  });

  it('not kept (the store refuses the write): 503, nothing starts; the service\'s next attempt is kept and starts the workflow — the store decides what is new, not the process that saw the first attempt', async () => {
    const s = await savedSession();
    await pg.sql('ALTER TABLE singpass_sign_deliveries ADD CONSTRAINT spfl_refuse_writes CHECK (false) NOT VALID', pg.database);
    let attempts = 0;
    env.beforeDelivery = async () => {
      if (++attempts === 2) await pg.sql('ALTER TABLE singpass_sign_deliveries DROP CONSTRAINT spfl_refuse_writes', pg.database);
    };
    try {
      await env.sb.phone.scan(s.signRef, { user: 'p256' });
      expect(await certificateAnswers(s.signRef, 2)).toEqual([503, 200]);
    } finally {
      await pg.sql('ALTER TABLE singpass_sign_deliveries DROP CONSTRAINT IF EXISTS spfl_refuse_writes', pg.database);
    }
    expect(firedFor(s.signRef)).toHaveLength(1);
    expect(await store.getDelivery(s.signRef, 'certificate')).toMatchObject({ applied: false });
  });

  it('a kept certificate whose run n8n lost comes out of List Due Sessions as replayCertificate (the trigger\'s item), once per lease; through Prepare and Submit the session goes on, and the save that moves it on marks the kept event applied', async () => {
    const s = await savedSession();
    await env.sb.phone.scan(s.signRef, { user: 'p256' });
    expect(await certificateAnswers(s.signRef, 1)).toEqual([200]);
    const [fired] = firedFor(s.signRef); // the execution n8n would have run: lost, nothing applies it
    await new Promise((r) => setTimeout(r, 1200)); // the credential's idle time
    const replays = (await listDue()).filter((i) => i.signRef === s.signRef);
    expect(replays).toEqual([{ action: 'replayCertificate', dueSince: expect.any(String), ...fired[0][0].json }]);
    expect((await listDue()).filter((i) => i.signRef === s.signRef)).toEqual([]); // leased to the first run

    // the replayed item carries no certificate (kept in the store): the sample's certificate steps load it by sign_ref
    expect(JSON.stringify(replays[0])).not.toContain(env.sb.pki.users.p256.certDer.toString('base64'));
    const [[prepared]] = await run({ resource: 'sessionRecord', operation: 'prepareStoredSignature' }, [{ json: replays[0] as IDataObject }]);
    expect(prepared.json).toMatchObject({ prepared: true });
    const [[submitted]] = await run({ resource: 'sessionRecord', operation: 'submitStoredHash' }, [prepared]);
    expect(submitted.json).toMatchObject({ status: 'hash_submitted' });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe((prepared.json.record as { submitting: { documentHash: string } }).submitting.documentHash);

    // the save past the event marked it applied (certificate dropped): never replayed, also after the lease
    const later = await store.claimDeliveriesToReplay({ owner: 'test', now: Date.now() + 61_000 });
    expect(later.filter((r) => r.record.state.signRef === s.signRef)).toEqual([]);
    const kept = await store.getDelivery(s.signRef, 'certificate');
    expect(kept?.applied).toBe(true);
    expect((kept!.delivery.event as { certificate: { base64: string } }).certificate.base64).toBe('');
  });
});
