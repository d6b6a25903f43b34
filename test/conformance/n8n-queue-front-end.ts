/**
 * n8n in QUEUE MODE as a conformance front end: main, one `n8n webhook` process and two `n8n worker` processes, Redis,
 * PostgreSQL for n8n (test/helpers/n8n-queue.ts), running the shipped queue-mode sample
 * (flows/n8n/document-signing-queue-mode.json, through test/n8n/queue-workflow.ts) with its one session store
 * credential on PostgreSQL. The store has a PostgreSQL server of its own so that the store's outage is that server
 * down while n8n's database stays up. The service and users call the webhook process; sessions' records are read from
 * the store's table; the crash is every n8n process SIGKILLed at once (Redis and both databases stay up, as when the
 * n8n hosts die). Signed PDFs: the sample's last step uploads them, here to a small receiver over HTTP instead of
 * SFTP (the bench's substitution), which keeps the last upload of each session.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import type { Sandbox } from '../../sandbox';
import { listen, readBody, type RunningServer } from '../../sandbox/http';
import { fixture } from '../fixtures/pdfs';
import type { N8nQueue } from '../helpers/n8n-queue';
import { startQueueSample } from '../n8n/queue-workflow';
import { releasePackage } from '../helpers/package';
import { RESUME_IDLE_S, RESUME_INTERVAL_S, SECRET, noStorage, poll, recordOutcome, uploadToSample, type FrontEnd, type Outcome, type StartFrontEnd } from './front-ends';

/** The sample's table prefix (test/n8n/queue-workflow.ts's store credential). */
const TABLES = 'singpass_sign_';

export const n8nQueueFrontEnd: StartFrontEnd = async (sb: Sandbox) => {
  const uploads = new Map<string, Buffer>();
  const receiver: RunningServer = await listen(async (req, res, url) => {
    const m = /^\/signed\/([^/]+)$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return void res.writeHead(404).end();
    uploads.set(decodeURIComponent(m[1]!), await readBody(req));
    res.writeHead(200, { 'content-length': '0' }).end();
  });
  let q: N8nQueue | undefined;
  let pool: Pool | undefined;
  const stop = async () => {
    await pool?.end().catch(() => undefined);
    await q?.stop();
    await receiver.close();
    releasePackage();
  };
  try {
    const clientId = 'conformance-n8n-queue';
    ({ q } = await startQueueSample({
      queue: { workers: 2, sessionPostgres: 'own' },
      resumeEverySeconds: RESUME_INTERVAL_S, idleSeconds: RESUME_IDLE_S, clientId, notificationSecret: SECRET,
      services: async () => ({ signingUrl: sb.baseUrl, signedPdfUrl: `${receiver.baseUrl}/signed` }),
    }));
    const n8n = q;
    // a short connect timeout: a read while the store is down fails at once and is asked again by the caller's poll
    pool = new Pool({ ...n8n.sessionDb, max: 2, connectionTimeoutMillis: 3000 });
    pool.on('error', () => undefined); // idle connections cut by the store's outage: the next query connects anew
    const db = pool;
    const row = async <T>(sql: string, signRef: string): Promise<T | undefined> => {
      try {
        return (await db.query(sql, [signRef])).rows[0] as T | undefined;
      } catch {
        return undefined; // the store is down
      }
    };
    const outcome = async (signRef: string): Promise<Outcome | undefined> => {
      const r = await row<{ record: unknown }>(`SELECT record FROM ${TABLES}sessions WHERE sign_ref = $1`, signRef);
      return r ? recordOutcome(r.record) : undefined;
    };
    let storeIsDown = false;
    const pdf = await fixture('classic');
    const webhooks = `${n8n.webhookUrl}/webhook/singpass-sign`;
    const fe: FrontEnd = {
      name: 'n8n queue mode',
      clientId,
      notificationSecret: SECRET,
      webhookUrl: `${webhooks}/webhook`,
      jwksUrl: `${webhooks}/jwks`,
      startSession: (name) => uploadToSample(`${webhooks}/document`, name, pdf),
      status: async (signRef) => (await outcome(signRef))?.status,
      outcome,
      // the upload after the document steps (B-LTA); short of that level (result.missing) those steps meet the same
      // refusal and upload nothing: the store's signed PDF (Run Due Step's, finalized) is the result
      signedPdf: (signRef) => poll(`the sample's signed PDF of ${signRef}`, async () => {
        const uploaded = uploads.get(signRef);
        if (uploaded) return uploaded;
        if ((await outcome(signRef))?.result?.missing === undefined) return undefined;
        return (await row<{ pdf: Buffer }>(`SELECT pdf FROM ${TABLES}signed_documents WHERE sign_ref = $1`, signRef))?.pdf;
      }, 90_000),
      kill: () => n8n.killAll(),
      restart: () => n8n.start(),
      running: () => n8n.processes.every((p) => n8n.isRunning(p)),
      async storeDown() {
        storeIsDown = true;
        await n8n.storePostgres.halt();
      },
      async storeUp() {
        if (!storeIsDown) return;
        await n8n.storePostgres.start();
        storeIsDown = false;
      },
      storage: noStorage('n8n queue mode'),
      log: () => n8n.log().slice(-8000),
      stop,
    };
    return fe;
  } catch (e) {
    await stop();
    throw e;
  }
};
