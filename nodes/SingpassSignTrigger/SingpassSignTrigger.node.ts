import {
  NodeConnectionTypes, type IHookFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription,
  type IWebhookFunctions, type IWebhookResponseData,
} from 'n8n-workflow';
import * as n8nWorkflow from 'n8n-workflow';
import { temporaryWebhookFailure } from '../../src/sign';
import { receiveDelivery, signerIdSetting, type DeliveryReceipt, type FrontDoorStore, type SigningEngine } from '../../src/session';
import { CREDENTIAL, nodeCredential } from '../shared/credentials';
import { signingEngine } from '../shared/engine';
import { DEFAULT_RECORD_FOLDER, readOnlyRecordStore } from '../shared/file-store';
import { PG_STORE_CREDENTIAL, STORE_CREDENTIAL, STORE_CREDENTIAL_VERSIONS, STORE_PARAMETER_VERSIONS, pgRecordStore, readableRecords, storeCredential, storeInput, usesStoreCredential } from '../shared/record-store';
import { PG_STORE_TITLE, credentialWhere, pgStoreSettings } from '../shared/pg-settings';
import { eventItem } from '../shared/session-data';

/**
 * The webhook's `path` from the node's Path parameter. n8n 2.41 can read it without its expression engine when the
 * field is declared with `webhookDescriptionFields` (its own Webhook node does): with the default `vm` engine every
 * expression evaluated per request runs in an isolate, in the webhook process that must answer the service within 2 s.
 * Older n8n versions lack the helper and evaluate the same template.
 */
function pathFromParameter(): { path: string } {
  const helpers = n8nWorkflow as unknown as {
    webhookDescriptionFields?: (fields: Record<string, unknown>) => { path: string };
    fromParameter?: (parameter: string) => unknown;
  };
  if (typeof helpers.webhookDescriptionFields === 'function' && typeof helpers.fromParameter === 'function') {
    return helpers.webhookDescriptionFields({ path: helpers.fromParameter('path') });
  }
  return { path: '={{$parameter["path"]}}' };
}

/** Certificate in Output's choices (Session Records "Elsewhere"). */
const CERTIFICATE_IN_OUTPUT_OPTIONS = [
  { name: 'Include (Puts the NRIC in the Execution Data)', value: 'include', description: 'The certificate event\'s item carries the user\'s certificate, whose subject holds their NRIC: n8n keeps it in the execution data (and every saved execution). Choose it only when Signing Session ▸ Prepare PDF Signature / Apply Webhook Event must read the certificate there: nothing else holds it.' },
  { name: 'Leave Out', value: 'leaveOut', description: 'The item names the signer (signer.name) but carries no certificate, so nothing in this workflow can prepare the signature: for a workflow that only reacts to the scan. To sign without the certificate in items, keep the records in the session store: its steps load it by sign_ref.' },
];

/**
 * Node versions whose Certificate in Output is Include by default (version 2: a workflow saved with the default keeps
 * behaving as it did) and those where it is Leave Out (version 3 on: new nodes put no NRIC in executions unless asked).
 */
export const CERTIFICATE_INCLUDED_BY_DEFAULT_VERSIONS = [2];
export const CERTIFICATE_LEFT_OUT_BY_DEFAULT_VERSIONS = [3];

/** The node's Certificate in Output, its version's default when unset. */
function certificateInOutput(ctx: IWebhookFunctions): string {
  const version = ctx.getNode().typeVersion;
  const fallback = CERTIFICATE_INCLUDED_BY_DEFAULT_VERSIONS.includes(version) ? 'include' : 'leaveOut';
  return String(ctx.getNodeParameter('certificateInOutput', fallback));
}

/** Output index per event type: certificate, signature, error. */
const OUTPUT = { certificate: 0, signature: 1, error: 2 } as const;

/** What this node uses of n8n's express request and response (n8n-workflow types them with express, not installed here). */
interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  rawBody?: Buffer;
}
interface WebhookResponse {
  status(code: number): { json(body: unknown): unknown; end(): unknown };
}

/**
 * The webhook the signing service calls (register its URL as your notification URL). Each delivery's Bearer is
 * checked and its JWT verified against the service key set; the service gets its answer at once (200; 400 with the
 * error body; 503 when the fault is ours, so it retries), and only then does the workflow start. Genuine,
 * first-time events leave on the output for their type; refused and duplicate deliveries never start the workflow.
 *
 * Given the store the Session Record nodes keep the records in (version 2 on: the same "Singpass Session Store"
 * credential; version 1: its Session Records In / Folder parameters) the Bearer is bound to its session BEFORE the answer: it must be the token the session named by the JWT's sign_ref was created
 * with (its stored record), so a delivery presented with another session's token, or for a session that is unknown or
 * has ended, is answered 400 and starts nothing; a store that cannot be read is answered 503 (the service retries).
 * With Session Records "Elsewhere" (version 1: an empty Folder) the check is stateless (any token this DSAP issued; the
 * binding then happens at Apply / Prepare, after the 200). A store the trigger cannot read is answered 503 and logged
 * naming the credential field to fix.
 *
 * With the PostgreSQL store each genuine delivery is also KEPT in the store before the 200 (not kept: 503): n8n
 * creates the execution only after the answer, and an execution it loses then (its database or Redis down for a
 * moment) would otherwise lose an event the service will never send again. A kept event that no step applied within
 * the credential's idle time comes out of List Due Sessions (`replayCertificate` / `replaySignature` / `replayError`)
 * into the same steps. A copy of an event already kept starts nothing.
 *
 * Version 3 only changes a default: with Session Records "Elsewhere" the certificate item leaves the user's certificate
 * (their NRIC) out unless Certificate in Output says Include; version 2 includes it, as workflows saved with it expect.
 */
export class SingpassSignTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Singpass Sign Trigger',
    name: 'singpassSignTrigger',
    icon: { light: 'file:sign.svg', dark: 'file:sign.dark.svg' },
    group: ['trigger'],
    version: [1, 2, 3],
    defaultVersion: 3,
    subtitle: '=/{{ $parameter["path"] }}',
    description: 'Receive Singpass signing events (certificate, signature, error)',
    defaults: { name: 'Singpass Sign Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main, NodeConnectionTypes.Main],
    outputNames: ['Certificate', 'Signature', 'Error'],
    credentials: [
      { name: CREDENTIAL.sign, required: true },
      { name: CREDENTIAL.notificationToken, required: true },
      { name: STORE_CREDENTIAL, required: true, displayOptions: { show: { sessionRecords: ['store'], '@version': STORE_CREDENTIAL_VERSIONS } } },
      { name: PG_STORE_CREDENTIAL, required: true, displayOptions: { show: { recordStore: ['postgres'], '@version': STORE_PARAMETER_VERSIONS } } },
    ],
    webhooks: [
      { name: 'default', httpMethod: 'POST', responseMode: 'onReceived', ...pathFromParameter(), isFullPath: true },
    ],
    properties: [
      {
        displayName: 'Path',
        name: 'path',
        type: 'string',
        default: 'singpass-sign',
        required: true,
        description: 'The webhook path; register https://&lt;your n8n&gt;/webhook/&lt;path&gt; as the notification URL of your DSAP client',
      },
      {
        displayName: 'Session Records',
        name: 'sessionRecords',
        type: 'options',
        options: [
          { name: 'In the Session Store (Credential)', value: 'store', description: 'Pick the Singpass Session Store credential your Session Record nodes use: each delivery is checked against its session before it is answered (another session\'s token, an unknown or ended session: 400, no workflow). PostgreSQL: each delivery is also kept there before the answer, and List Due Sessions replays any that no run applied.' },
          { name: 'Elsewhere (Token Check Only)', value: 'none', description: 'Your workflow keeps records another way: only checks that this DSAP issued the token (the session is matched later, at Prepare PDF Signature / Apply Webhook Event)' },
        ],
        default: 'store',
        displayOptions: { show: { '@version': STORE_CREDENTIAL_VERSIONS } },
      },
      // one parameter, a default per version: n8n saves a workflow without the parameters left at their default, so a
      // version-2 node saved that way must keep including the certificate; version 3 leaves it out unless asked
      {
        displayName: 'Certificate in Output',
        name: 'certificateInOutput',
        type: 'options',
        options: CERTIFICATE_IN_OUTPUT_OPTIONS,
        default: 'include',
        displayOptions: { show: { sessionRecords: ['none'], '@version': CERTIFICATE_INCLUDED_BY_DEFAULT_VERSIONS } },
      },
      {
        displayName: 'Certificate in Output',
        name: 'certificateInOutput',
        type: 'options',
        options: CERTIFICATE_IN_OUTPUT_OPTIONS,
        default: 'leaveOut',
        displayOptions: { show: { sessionRecords: ['none'], '@version': CERTIFICATE_LEFT_OUT_BY_DEFAULT_VERSIONS } },
      },
      {
        displayName: 'Signer\'s ID in Output',
        name: 'signerId',
        type: 'options',
        options: [
          { name: 'None', value: 'none', description: 'The certificate event names the signer by name only (signer.name)' },
          { name: 'Masked (Last Four Characters)', value: 'masked', description: 'Also signer.maskedId: the NRIC/FIN with all but its last four characters masked (e.g. *****567D). The full NRIC is never output.' },
        ],
        default: 'none',
      },
      {
        // version 1: the Session Record nodes' Store choice, repeated here (queue mode: this trigger runs in a webhook process)
        ...storeInput,
        displayName: 'Session Records In',
        name: 'recordStore',
        description: 'Where your Session Record nodes keep the records (their Store), so each delivery can be checked against its session before it is answered. PostgreSQL: each delivery is also kept there before the answer, and List Due Sessions replays any that no run applied.',
      },
      {
        displayName: 'Session Record Folder',
        name: 'recordFolder',
        type: 'string',
        default: '',
        displayOptions: { show: { recordStore: ['folder'], '@version': STORE_PARAMETER_VERSIONS } },
        placeholder: DEFAULT_RECORD_FOLDER,
        description: 'The Folder of your Session Record nodes. When set, each delivery is checked against its session\'s stored record before it is answered: a delivery with another session\'s token, or for an unknown or ended session, is refused (400) and starts no workflow. Empty: only checks that this DSAP issued the token (the session is matched later, at Prepare PDF Signature / Apply Webhook Event).',
      },
      {
        displayName: 'Certificate events: Prepare PDF Signature, save the record, Submit Document Hash at once (the user is waiting for the hash). Signature and error events: Run Due Step (Session Record) records the event, then finalizes a signature. The sample workflow does both.',
        name: 'notice',
        type: 'notice',
        default: '',
      },
    ],
  };

  webhookMethods = {
    default: {
      // The notification URL is registered with the signing service at onboarding, not by n8n.
      async checkExists(this: IHookFunctions): Promise<boolean> {
        return false;
      },
      // On activation, fetch the service key set so the first delivery is answered at once (failures are retried later).
      async create(this: IHookFunctions): Promise<boolean> {
        try {
          const { engine } = await signingEngine(this as unknown as IWebhookFunctions);
          await engine.verifier.warmUp();
        } catch (e) {
          // not fatal: until the key set is reachable each delivery is answered 503, and the service retries
          this.logger.warn(`Singpass Sign Trigger could not fetch the service key set yet: ${(e as Error).message}`);
        }
        return true;
      },
      async delete(this: IHookFunctions): Promise<boolean> {
        return true;
      },
    },
  };

  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const req = this.getRequestObject() as WebhookRequest;
    const res = this.getResponseObject() as WebhookResponse;
    const body = req.rawBody ?? (this.getBodyData() as Record<string, unknown>);
    let receipt: Pick<DeliveryReceipt, 'response' | 'verdict' | 'delivery' | 'error'>;
    let binding: Awaited<ReturnType<typeof sessionBinding>>;
    try {
      const { engine } = await signingEngine(this);
      binding = await sessionBinding.call(this);
      // With a store: the core's one front door (verify, bind the Bearer to the stored session, keep, answer).
      receipt = binding ? await receiveDelivery(engine, binding.store, { headers: req.headers, body }) : await statelessCheck(engine, { headers: req.headers, body });
    } catch (e) {
      // Our configuration failed (a credential, a folder): our fault, so 503 and the service retries after it is fixed.
      const code = (e as { code?: unknown })?.code;
      this.logger.error(`Singpass Sign Trigger cannot check deliveries (answered 503, the service retries): ${typeof code === 'string' ? `${code} ` : ''}${(e as Error).message}`);
      const failure = temporaryWebhookFailure();
      res.status(failure.status).json(failure.body);
      return { noWebhookResponse: true };
    }
    const r = receipt.response;
    if ('body' in r) res.status(r.status).json(r.body);
    else res.status(r.status).end();
    log(this, receipt, binding);
    // only a genuine, first-seen event of a session waiting for it starts the workflow
    if (receipt.verdict !== 'handOver' || !receipt.delivery) return { noWebhookResponse: true };

    const outputs: INodeExecutionData[][] = [[], [], []];
    // kept in the session store before the answer: the item carries no certificate (the steps load it by sign_ref)
    const kept = binding?.store.rememberDelivery !== undefined;
    const leftOut = !binding && usesStoreCredential(this) && certificateInOutput(this) === 'leaveOut';
    outputs[OUTPUT[receipt.delivery.event.type]].push({ json: eventItem(receipt.delivery, { withholdCertificate: kept || leftOut, signerId: signerIdSetting(this.getNodeParameter('signerId', 'none')) }) });
    return { noWebhookResponse: true, workflowData: outputs };
  }
}

/** Without a store (an empty Folder): only the stateless checks — the service's JWT and a Bearer this DSAP issued. */
async function statelessCheck(engine: SigningEngine, request: Parameters<SigningEngine['checkDelivery']>[0]): Promise<Pick<DeliveryReceipt, 'response' | 'verdict' | 'delivery' | 'error'>> {
  const check = await engine.checkDelivery(request);
  if (!check.delivery) return { response: check.response, verdict: check.response.status >= 500 ? 'retryLater' : 'refused', ...(check.error ? { error: check.error } : {}) };
  return { response: check.response, verdict: check.duplicate ? 'copy' : 'handOver', delivery: check.delivery };
}

/** One log line per delivery not handed over, worded for the one who can fix it. */
function log(ctx: IWebhookFunctions, receipt: Pick<DeliveryReceipt, 'verdict' | 'delivery' | 'error'>, binding: { where: string; setting: string } | undefined): void {
  const error = receipt.error ? `${receipt.error.code} ${receipt.error.message}` : '';
  const where = binding?.where;
  switch (receipt.verdict) {
    case 'handOver':
    case 'copy':
      return;
    case 'notFound':
      // Either a scan that beat Save Record, or a trigger looking in another store than the Session Record nodes save
      // to (the queue-mode trap): the message names the setting so the second is fixed, not waited out.
      ctx.logger.warn(`Singpass Sign Trigger: no session record for ${signRefOf(receipt) ?? 'the delivery\'s session'} in ${where ?? 'the session store'} (${binding?.setting ?? 'its session store'}): answered 503, the service delivers again. If your Session Record nodes save elsewhere, ${otherStoreFix(binding)}; else the scan came right after Create Session, before Save Record`);
      return;
    case 'storeDown':
      ctx.logger.error(`Singpass Sign Trigger cannot read or keep in ${where ?? 'the session store'}: ${error} (answered 503, the service retries)`);
      return;
    default:
      ctx.logger.warn(`Singpass Sign Trigger refused a delivery: ${error}`);
  }
}

/** What to change when the Session Record nodes save to another store than the trigger reads. */
function otherStoreFix(binding: { where: string; setting: string } | undefined): string {
  if (!binding?.setting.startsWith('Credential')) return 'set Session Records In to that same store (e.g. PostgreSQL in queue mode)';
  const folder = binding.where.startsWith('the folder') ? ' (a folder is one host\'s: in queue mode set that credential\'s Kind to PostgreSQL)' : '';
  return `pick their Singpass Session Store credential on this trigger too${folder}`;
}

/** The sign_ref a not-found delivery named (from the front door's message: it has no delivery then). */
function signRefOf(receipt: Pick<DeliveryReceipt, 'error'>): string | undefined {
  return /for (\S+) in the session store/.exec(receipt.error?.message ?? '')?.[1];
}

/**
 * The store the trigger binds deliveries to (read-only but for keeping deliveries): version 2, the store credential's
 * folder or PostgreSQL database (either keeps each delivery before the answer); version 1, its Session Records In
 * / Folder parameters. None when records are kept elsewhere (version 1: an empty Folder). `setting` names where the
 * user chose it, for the log.
 */
async function sessionBinding(this: IWebhookFunctions): Promise<{ store: FrontDoorStore; where: string; setting: string } | undefined> {
  if (usesStoreCredential(this)) {
    if (this.getNodeParameter('sessionRecords', 'store') === 'none') return undefined;
    const { settings, where: credential } = await storeCredential(this);
    if (settings.kind === 'postgres') {
      const store = pgRecordStore(settings.pg, credential, settings.policy);
      return { store: { get: readableRecords((signRef) => store.get(signRef)), rememberDelivery: (delivery) => store.rememberDelivery(delivery) }, where: `the PostgreSQL store (${store.where})`, setting: credential };
    }
    const store = await readOnlyRecordStore(settings.folder, { where: `${credential}, field "Folder"`, field: 'Folder' });
    // kept before the answer, as in PostgreSQL: an execution lost after the 200 is replayed by List Due Sessions
    return { store: { get: readableRecords((signRef) => store.get(signRef)), rememberDelivery: (delivery) => store.rememberDelivery(delivery) }, where: `the folder ${settings.folder}`, setting: credential };
  }
  if (this.getNodeParameter('recordStore', 'folder') === 'postgres') {
    const credential = credentialWhere(PG_STORE_TITLE, this.getNode().credentials?.[PG_STORE_CREDENTIAL]?.name ?? undefined);
    const pg = pgStoreSettings(await nodeCredential(this, PG_STORE_CREDENTIAL));
    const store = pgRecordStore(pg.settings, credential, pg.policy);
    return { store: { get: readableRecords((signRef) => store.get(signRef)), rememberDelivery: (delivery) => store.rememberDelivery(delivery) }, where: `the PostgreSQL store (${store.where})`, setting: 'Session Records In' };
  }
  const folder = String(this.getNodeParameter('recordFolder', '') ?? '').trim();
  if (!folder) return undefined;
  const store = await readOnlyRecordStore(folder);
  return { store: { get: readableRecords((signRef) => store.get(signRef)) }, where: `the folder ${folder}`, setting: 'Session Records In' };
}
