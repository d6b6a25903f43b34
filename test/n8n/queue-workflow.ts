/**
 * The sample signing workflow as a queue-mode installation runs it, built from flows/n8n/document-signing.json as
 * docs/n8n-queue-mode.md tells a user to change it: its one "Singpass Session Store" credential created with Kind
 * PostgreSQL (no node of the workflow changed for that), and the signed PDF delivered over HTTP (a document system
 * every worker reaches) instead of a file on whichever worker ran the execution. Plus a test-only probe workflow that
 * reads a session record through a Load Session Record node — a VERSION-1 node on the old "Singpass Session Store
 * (PostgreSQL)" credential, as a workflow saved before the store credential has it — so the tests look at the store
 * the way a workflow does, over HTTP, and an old workflow is shown reading what the new one writes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys, type ClientKeys } from '../../src/keys';
import type { N8nQueue } from '../helpers/n8n-queue';
import { REPO_ROOT } from '../helpers/repo';
import { SESSION_STORE, sessionStoreCredential, uploadKeyCredential } from './real-n8n';

/** The version-1 probe's credential (the old PostgreSQL-only type), on the same database and tables. */
export const PG_CREDENTIAL = { id: 'spflPgStore00001', name: 'Singpass session store (PostgreSQL, version 1 nodes)' };
const SAMPLE = path.join(REPO_ROOT, 'flows/n8n/document-signing.json');
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
  /** Where the signed PDFs go: `POST <url>/<signRef>` with the PDF as the body. */
  signedPdfUrl: string;
  /** Resume schedule interval (s) and how long a step in progress is left alone (s). */
  resumeEverySeconds: number;
  idleSeconds: number;
  /** The DSAP's keys (default: new ones), e.g. to publish their public set elsewhere than the key-set workflow. */
  dsapKeys?: ClientKeys;
}

export function queueSigningWorkflow(o: QueueWorkflowOptions): Workflow {
  const wf = JSON.parse(fs.readFileSync(SAMPLE, 'utf8')) as Workflow;
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
    if (n.type === 'n8n-nodes-base.readWriteFile' && p.operation === 'write') {
      const signRefExpr = String(p.fileName).match(/\{\{(.*?)\}\}/)?.[1];
      if (!signRefExpr) throw new Error(`cannot find the signRef expression in ${n.name}'s file name ${String(p.fileName)}`);
      Object.assign(n, {
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: {
          method: 'POST',
          url: `=${o.signedPdfUrl}/{{${signRefExpr}}}`,
          sendBody: true,
          contentType: 'binaryData',
          inputDataFieldName: String(p.dataPropertyName ?? 'data'),
          options: {},
        },
      });
    }
  }
  if (records < 4) throw new Error(`the sample has ${records} session store nodes: not the workflow this test knows`);
  if (wf.nodes.some((n) => n.type === 'n8n-nodes-base.readWriteFile')) throw new Error('the sample still writes files');
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
 * secret, the session store — Kind PostgreSQL — on the helper's session database with `idleSeconds`, and the version-1
 * probe's PostgreSQL credential on the same tables), the queue version of the signing
 * sample, the key-set sample and the probe, all published; their webhooks registered for the start-up check.
 */
export async function importQueueSample(q: N8nQueue, o: QueueWorkflowOptions & { signingUrl: string }): Promise<Workflow> {
  const dsap = o.dsapKeys ?? await generateClientKeys();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-import-'));
  try {
    fs.writeFileSync(path.join(dir, 'credentials.json'), JSON.stringify([
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: o.signingUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'e2e-notification-secret-0123456789abcdef' } },
      sessionStoreCredential({ kind: 'postgres', ...q.sessionDb, ssl: false, tablePrefix: 'singpass_sign_', idleSeconds: o.idleSeconds }),
      { ...PG_CREDENTIAL, type: 'singpassSessionStorePostgresApi', data: { ...q.sessionDb, ssl: false, tablePrefix: 'singpass_sign_', idleSeconds: o.idleSeconds } },
      uploadKeyCredential(),
    ]));
    await q.cli(['import:credentials', `--input=${path.join(dir, 'credentials.json')}`]);
    const signing = queueSigningWorkflow(o);
    const keySet = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'flows/n8n/key-set-endpoint.json'), 'utf8')) as Workflow;
    for (const wf of [signing, keySet, probeWorkflow()]) {
      const file = path.join(dir, `${wf.id}.json`);
      fs.writeFileSync(file, JSON.stringify(wf));
      await q.cli(['import:workflow', `--input=${file}`]);
      await q.cli(['publish:workflow', `--id=${wf.id}`]);
      for (const n of wf.nodes) {
        const p = n.parameters as { path?: unknown; httpMethod?: string };
        if (typeof p.path === 'string') q.webhooks.push({ path: p.path, method: p.httpMethod ?? (n.type.endsWith('Trigger') ? 'POST' : 'GET') });
      }
    }
    return signing;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
