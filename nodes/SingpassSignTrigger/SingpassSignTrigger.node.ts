import {
  NodeConnectionTypes, type IDataObject, type IHookFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription,
  type IWebhookFunctions, type IWebhookResponseData,
} from 'n8n-workflow';
import { randomUUID } from 'node:crypto';
import { CREDENTIAL } from '../shared/credentials';
import { signingEngine } from '../shared/engine';
import { deliveryToJson } from '../shared/session-data';

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
 * checked against the notification-token secret (statelessly: works after a restart and in queue mode) and its JWT
 * against the service key set; the service gets its answer at once (200; 400 with the error body; 503 when the
 * fault is ours, so it retries). Genuine, first-time events leave on the output for their type; refused and
 * duplicate deliveries never start the workflow.
 */
export class SingpassSignTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Singpass Sign Trigger',
    name: 'singpassSignTrigger',
    icon: { light: 'file:sign.svg', dark: 'file:sign.dark.svg' },
    group: ['trigger'],
    version: 1,
    subtitle: '=/{{ $parameter["path"] }}',
    description: 'Receive Singpass signing events (certificate, signature, error)',
    defaults: { name: 'Singpass Sign Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main, NodeConnectionTypes.Main],
    outputNames: ['Certificate', 'Signature', 'Error'],
    credentials: [
      { name: CREDENTIAL.sign, required: true },
      { name: CREDENTIAL.notificationToken, required: true },
    ],
    webhooks: [
      { name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: '={{ $parameter["path"] }}', isFullPath: true },
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
        displayName: 'Certificate events: run Apply Webhook Event at once (the user is waiting for the hash). Signature events: Apply Webhook Event, then Finalize Signature. Error events: record the failure.',
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
    let check;
    try {
      const { engine } = await signingEngine(this);
      check = await engine.checkDelivery({ headers: req.headers, body });
    } catch (e) {
      // Our configuration failed (e.g. a credential): our fault, so 503 and the service retries after it is fixed.
      this.logger.error(`Singpass Sign Trigger cannot check deliveries: ${(e as Error).message}`);
      res.status(503).json({ correlation_id: randomUUID(), error_code: 'internal_error', message: 'Temporary failure at the DSAP; please retry' });
      return { noWebhookResponse: true };
    }
    const r = check.response;
    if ('body' in r) res.status(r.status).json(r.body);
    else res.status(r.status).end();
    if (check.error) this.logger.warn(`Singpass Sign Trigger refused a delivery: ${check.error.code} ${check.error.message}`);
    if (!check.delivery || check.duplicate) return { noWebhookResponse: true };

    const { event } = check.delivery;
    const json: IDataObject = { type: event.type, signRef: event.signRef, delivery: deliveryToJson(check.delivery) };
    if (event.type === 'error') json.error = { code: event.errorCode, message: event.message, correlationId: event.correlationId };
    const outputs: INodeExecutionData[][] = [[], [], []];
    outputs[OUTPUT[event.type]].push({ json });
    return { noWebhookResponse: true, workflowData: outputs };
  }
}
