/**
 * The sample signing workflow as a queue-mode installation runs it: flows/n8n/document-signing-queue-mode.json
 * (generated from document-signing.json by scripts/make-n8n-queue-sample.js), its one "Singpass Session Store"
 * credential created with Kind PostgreSQL (no node changed for that), the signed PDF uploaded to an SFTP server by n8n's
 * FTP node. Plus a test-only probe workflow that reads a session record through a Load Session Record node — a
 * VERSION-1 node on the old "Singpass Session Store (PostgreSQL)" credential, as a workflow saved before the store
 * credential has it — so the tests look at the store the way a workflow does, over HTTP, and an old workflow is shown
 * reading what the new one writes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys, type ClientKeys } from '../../src/keys';
import { createN8nQueue, type N8nQueue, type N8nQueueOptions } from '../helpers/n8n-queue';
import { REPO_ROOT } from '../helpers/repo';
import { SESSION_STORE, n8nInstallDir, sessionStoreCredential, uploadKeyCredential } from './real-n8n';

/** The version-1 probe's credential (the old PostgreSQL-only type), on the same database and tables. */
export const PG_CREDENTIAL = { id: 'spflPgStore00001', name: 'Singpass session store (PostgreSQL, version 1 nodes)' };
/** The sample's SFTP credential (scripts/make-n8n-queue-sample.js names it). */
const SFTP_CREDENTIAL = { id: 'spflSftpSigned01', name: 'SFTP (signed PDFs)' };
/** What n8n's SFTP credential takes: the account the signed PDFs are uploaded with. */
export interface SftpAccount { host: string; port: number; username: string; privateKey: string }
const QUEUE_SAMPLE = path.join(REPO_ROOT, 'flows/n8n/document-signing-queue-mode.json');
const PKG = '@singpass-flows/n8n-nodes-singpass';

interface WfNode {
  id?: string;
  webhookId?: string;
  name: string;
  type: string;
  typeVersion?: number;
  position?: [number, number];
  parameters: Record<string, unknown>;
  credentials?: Record<string, { id: string; name: string }>;
}
export interface Workflow {
  id: string;
  name: string;
  nodes: WfNode[];
  connections: Record<string, unknown>;
  [k: string]: unknown;
}

export interface QueueWorkflowOptions {
  /** Resume schedule interval (s) and how long a step in progress is left alone (s). */
  resumeEverySeconds: number;
  idleSeconds: number;
  /** The DSAP's keys (default: new ones), e.g. to publish their public set elsewhere than the key-set workflow. */
  dsapKeys?: ClientKeys;
  /**
   * Instead of the sample's SFTP upload, `POST <url>/<signRef>` with the signed PDF (an HTTP Request node): for the
   * bench, which counts every delivery of a signed PDF (a second upload over SFTP would overwrite the first unseen).
   */
  signedPdfUrl?: string;
  /** Run Due Step's hand-over lease and window (seconds; default the sample's, 5 min and a day). */
  handOver?: { leaseSeconds: number; windowSeconds: number };
  /** The DSAP's client id at the signing service (default `n8n-dsap`) and its notification-token secret. */
  clientId?: string;
  notificationSecret?: string;
}

/**
 * The shipped queue-mode sample as a user imports it; only the resume schedule's interval is the test's (seconds, not
 * 30 s). The SFTP upload's path is the sample's own (`/signed/…`): the test's server chroots its account there.
 */
export function queueSigningWorkflow(o: QueueWorkflowOptions): Workflow {
  const wf = JSON.parse(fs.readFileSync(QUEUE_SAMPLE, 'utf8')) as Workflow;
  let records = 0;
  for (const n of wf.nodes) {
    const p = n.parameters;
    // queue mode changes no store node: they all name the one store credential, created below with Kind PostgreSQL
    if ((n.type === `${PKG}.singpassSign` && p.resource === 'sessionRecord') || n.type === `${PKG}.singpassSignTrigger`) {
      if (n.credentials?.singpassSessionStoreApi?.id !== SESSION_STORE.id) throw new Error(`${n.name} does not use the sample's session store credential`);
      records++;
    }
    if (n.type === 'n8n-nodes-base.scheduleTrigger') {
      const rule = p.rule as { interval: Array<Record<string, unknown>> };
      if (rule.interval[0].field === 'seconds') rule.interval[0].secondsInterval = o.resumeEverySeconds;
    }
    if (o.handOver && p.operation === 'runDueStep') Object.assign(p, { handOverLeaseSeconds: o.handOver.leaseSeconds, handOverWindowSeconds: o.handOver.windowSeconds });
    if (o.signedPdfUrl && n.type === 'n8n-nodes-base.ftp') {
      const signRefExpr = String(p.path).match(/\{\{(.*?)\}\}/)?.[1];
      if (!signRefExpr) throw new Error(`cannot find the signRef expression in ${n.name}'s path ${String(p.path)}`);
      Object.assign(n, {
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: { method: 'POST', url: `=${o.signedPdfUrl}/{{${signRefExpr}}}`, sendBody: true, contentType: 'binaryData', inputDataFieldName: String(p.binaryPropertyName ?? 'data'), options: {} },
      });
      delete n.credentials;
    }
  }
  if (records < 4) throw new Error(`the sample has ${records} session store nodes: not the workflow this test knows`);
  if (!o.signedPdfUrl && !wf.nodes.some((n) => n.type === 'n8n-nodes-base.ftp' && n.parameters.protocol === 'sftp')) throw new Error('the queue sample does not upload over SFTP');
  return wf;
}

/** GET /webhook/test/session-record?signRef=… → Load Session Record (PostgreSQL) → its output as JSON. */
export function probeWorkflow(): Workflow {
  return {
    id: 'spflQueueProbe01',
    name: 'Test probe: session record',
    nodes: [
      {
        id: '6f1d0c52-0d7e-4a8b-9a51-3c2f1b9e7a01', name: 'Probe', type: 'n8n-nodes-base.webhook', typeVersion: 2.1, position: [0, 0],
        // n8n registers a production webhook under its node's webhookId
        webhookId: '0b7c52f4-7f0e-4d55-8b8e-2a0c7d3f9e11', parameters: { httpMethod: 'GET', path: 'test/session-record', responseMode: 'responseNode', options: {} },
      },
      {
        // version 1: the Store parameter and the old PostgreSQL credential
        id: '6f1d0c52-0d7e-4a8b-9a51-3c2f1b9e7a02', name: 'Load', type: `${PKG}.singpassSign`, typeVersion: 1, position: [200, 0],
        parameters: { resource: 'sessionRecord', operation: 'loadRecord', store: 'postgres', signRef: '={{ $json.query.signRef }}', pdfBinaryField: '', ifMissing: 'output' },
        credentials: { singpassSessionStorePostgresApi: PG_CREDENTIAL },
      },
      {
        id: '6f1d0c52-0d7e-4a8b-9a51-3c2f1b9e7a03', name: 'Answer', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.5, position: [400, 0],
        parameters: { respondWith: 'json', responseBody: '={{ JSON.stringify($json) }}', options: {} },
      },
    ],
    connections: { Probe: { main: [[{ node: 'Load', type: 'main', index: 0 }]] }, Load: { main: [[{ node: 'Answer', type: 'main', index: 0 }]] } },
    active: false,
    settings: { executionOrder: 'v1', saveDataSuccessExecution: 'none' },
    pinData: {},
  };
}

/**
 * Into a queue-mode n8n (before start): the credentials (Singpass Sign API on `signingUrl`, the notification-token
 * secret, the session store — Kind PostgreSQL — on the helper's session database with `idleSeconds`, the version-1
 * probe's PostgreSQL credential on the same tables, SFTP on `sftp`), the queue version of the signing
 * sample, the key-set sample and the probe, all published; their webhooks registered for the start-up check.
 */
export async function importQueueSample(q: N8nQueue, o: QueueWorkflowOptions & { signingUrl: string; sftp?: SftpAccount }): Promise<Workflow> {
  const dsap = o.dsapKeys ?? await generateClientKeys();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-import-'));
  try {
    fs.writeFileSync(path.join(dir, 'credentials.json'), JSON.stringify([
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: o.signingUrl, clientId: o.clientId ?? 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: o.notificationSecret ?? 'e2e-notification-secret-0123456789abcdef' } },
      sessionStoreCredential({ kind: 'postgres', ...q.sessionDb, ssl: false, tablePrefix: 'singpass_sign_', idleSeconds: o.idleSeconds }),
      { ...PG_CREDENTIAL, type: 'singpassSessionStorePostgresApi', data: { ...q.sessionDb, ssl: false, tablePrefix: 'singpass_sign_', idleSeconds: o.idleSeconds } },
      ...(o.sftp ? [{ ...SFTP_CREDENTIAL, type: 'sftp', data: { host: o.sftp.host, port: o.sftp.port, username: o.sftp.username, password: '', privateKey: o.sftp.privateKey, passphrase: '' } }] : []),
      uploadKeyCredential(),
    ]));
    await q.cli(['import:credentials', `--input=${path.join(dir, 'credentials.json')}`]);
    if (!o.sftp && !o.signedPdfUrl) throw new Error('the signed PDFs need somewhere to go: sftp or signedPdfUrl');
    const signing = queueSigningWorkflow(o);
    const keySet = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'flows/n8n/key-set-endpoint.json'), 'utf8')) as Workflow;
    for (const wf of [signing, keySet, probeWorkflow()]) {
      const file = path.join(dir, `${wf.id}.json`);
      fs.writeFileSync(file, JSON.stringify(wf));
      await q.cli(['import:workflow', `--input=${file}`]);
      await q.cli(['publish:workflow', `--id=${wf.id}`]);
      for (const n of wf.nodes) {
        const p = n.parameters as { path?: unknown; httpMethod?: string };
        // webhook nodes only: the FTP node's `path` is a file on the SFTP server
        const isWebhook = n.type === 'n8n-nodes-base.webhook' || n.type.endsWith('Trigger');
        if (isWebhook && typeof p.path === 'string') q.webhooks.push({ path: p.path, method: p.httpMethod ?? (n.type.endsWith('Trigger') ? 'POST' : 'GET') });
      }
    }
    return signing;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface QueueSampleOptions extends Omit<QueueWorkflowOptions, 'signedPdfUrl'> {
  /** The queue-mode deployment (workers, a store PostgreSQL of its own…); n8n and the packed package are found here. */
  queue?: Omit<N8nQueueOptions, 'installDir'>;
  /**
   * What the sample talks to, started by the caller once the deployment's URLs and folders exist (a service that
   * calls the webhook process): the signing service's URL, and where signed PDFs go (an SFTP account or a URL).
   * The caller stops them.
   */
  services(q: N8nQueue): Promise<{ signingUrl: string; sftp?: SftpAccount; signedPdfUrl?: string }>;
}

/**
 * The queue-mode sample deployed and running, as every queue-mode test needs it: this package packed, a queue-mode
 * n8n created with it installed in every process, the sample imported (importQueueSample) and every process started,
 * n8n having loaded the package's nodes. On a failure everything started here is stopped; on success `q.stop()` does.
 */
export async function startQueueSample(o: QueueSampleOptions): Promise<{ q: N8nQueue; workflow: Workflow }> {
  const installDir = n8nInstallDir();
  if (!installDir) throw new Error('n8n is not installed: run scripts/install-n8n.sh first');
  const q = await createN8nQueue({ installDir, ...o.queue });
  try {
    const workflow = await importQueueSample(q, { ...o, ...(await o.services(q)) });
    await q.start();
    if (/Error loading package|Unrecognized node type/.test(q.log())) throw new Error(`n8n did not load the package's nodes:\n${q.log()}`);
    return { q, workflow };
  } catch (e) {
    await q.stop();
    throw e;
  }
}
