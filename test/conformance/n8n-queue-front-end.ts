/**
 * n8n in QUEUE MODE as a conformance front end: main, one `n8n webhook` process and two `n8n worker` processes, Redis,
 * PostgreSQL for n8n (test/helpers/n8n-queue.ts), running the shipped queue-mode sample
 * (flows/n8n/document-signing-queue-mode.json, through test/n8n/queue-workflow.ts) with its one session store
 * credential on PostgreSQL. The store has a PostgreSQL server of its own so that the store's outage is that server
 * down while n8n's database stays up. The service and users call the webhook process; sessions' records are read from
 * the store's table; the crash is every n8n process SIGKILLed at once (Redis and both databases stay up, as when the
 * n8n hosts die). Signed PDFs: the sample's storage uploads them to an SFTP server (test/helpers/sftp.ts), whose
 * outage is that server stopped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import type { Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import type { N8nQueue } from '../helpers/n8n-queue';
import { startSftpServer, type SftpServer } from '../helpers/sftp';
import { startQueueSample } from '../n8n/queue-workflow';
import { releasePackage } from '../helpers/package';
import { HANDOVER_LEASE_S, HANDOVER_WINDOW_S, RESUME_IDLE_S, RESUME_INTERVAL_S, SECRET, poll, recordOutcome, uploadToSample, type FrontEnd, type Outcome, type StartFrontEnd } from './front-ends';

/** The sample's table prefix (test/n8n/queue-workflow.ts's store credential). */
const TABLES = 'singpass_sign_';

export const n8nQueueFrontEnd: StartFrontEnd = async (sb: Sandbox) => {
  const sftp: SftpServer = await startSftpServer();
  let sftpDown = false;
  let q: N8nQueue | undefined;
  let pool: Pool | undefined;
  const stop = async () => {
    await pool?.end().catch(() => undefined);
    await q?.stop();
    await sftp.stop();
    releasePackage();
  };
  try {
    const clientId = 'conformance-n8n-queue';
    ({ q } = await startQueueSample({
      queue: { workers: 2, sessionPostgres: 'own' },
      resumeEverySeconds: RESUME_INTERVAL_S, idleSeconds: RESUME_IDLE_S, clientId, notificationSecret: SECRET,
      handOver: { leaseSeconds: HANDOVER_LEASE_S, windowSeconds: HANDOVER_WINDOW_S },
      services: async () => ({ signingUrl: sb.baseUrl, sftp }),
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
    // what landed on the SFTP server (the sample's /signed/<signRef>-signed.pdf)
    const stored = async (signRef: string): Promise<Buffer | undefined> => {
      try {
        return fs.readFileSync(path.join(sftp.localDir, `${signRef}-signed.pdf`));
      } catch {
        return undefined;
      }
    };
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
      // the upload, once the flow acknowledged it (whole by then)
      signedPdf: (signRef) => poll(`the sample's uploaded signed PDF of ${signRef}`, async () => ((await outcome(signRef))?.phase === 'completed' ? stored(signRef) : undefined), 90_000),
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
      storage: {
        stored,
        async down() {
          sftpDown = true;
          await sftp.halt();
        },
        async up() {
          if (!sftpDown) return;
          await sftp.start();
          sftpDown = false;
        },
      },
      log: () => n8n.log().slice(-8000),
      stop,
    };
    return fe;
  } catch (e) {
    await stop();
    throw e;
  }
};
