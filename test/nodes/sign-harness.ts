/**
 * The whole sandbox (signing API, phone, test CA with OCSP and TSA) on 127.0.0.1, and a DSAP whose webhook is the
 * Singpass Sign Trigger node's `webhook()` (behind a real HTTP server) and whose key set is the Key Set node's output.
 */
import { mockDeep } from 'jest-mock-extended';
import type { ICredentialDataDecryptedObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';
import { generateClientKeys } from '../../src/keys';
import { startSandbox, type Sandbox } from '../../sandbox';
import { listen, readBody, type RunningServer } from '../../sandbox/http';
import { SingpassKeySet } from '../../nodes/SingpassKeySet/SingpassKeySet.node';
import { SingpassSignTrigger } from '../../nodes/SingpassSignTrigger/SingpassSignTrigger.node';
import { executeContext, testNode } from './context';

export interface SignSandbox {
  sb: Sandbox;
  credentials: Record<string, ICredentialDataDecryptedObject>;
  /** Trigger outputs (certificate, signature, error) per delivery that started the workflow. */
  fired: INodeExecutionData[][][];
  /** Every answer the trigger gave: status and body. */
  answers: Array<{ status: number; body?: unknown }>;
  /** What the trigger logged (warnings and errors), in order. */
  logs: string[];
  /** Set to change a delivery's headers before the trigger sees it (e.g. present another session's Bearer). */
  rewriteHeaders?: (headers: Record<string, string | string[] | undefined>, rawBody: Buffer) => Record<string, string | string[] | undefined>;
  /** Set to run (awaited) before the trigger sees each delivery, e.g. to end a fault between the service's attempts. */
  beforeDelivery?: () => Promise<void>;
  /** The trigger node's parameters (e.g. `sessionRecords`), read at each delivery: change them between tests. */
  triggerParams: Record<string, unknown>;
  /**
   * The trigger node's typeVersion (default 2: its store is the `singpassSessionStoreApi` credential in `credentials`;
   * 1: its Session Records In / Session Record Folder parameters).
   */
  triggerVersion: number;
  /** Resolves with the next trigger run that has an item on `output` (0 certificate, 1 signature, 2 error). */
  next(output: number, timeoutMs?: number): Promise<INodeExecutionData>;
  close(): Promise<void>;
}

export async function startSignSandbox(): Promise<SignSandbox> {
  const sb = await startSandbox({ webhookRetryDelayMs: 20 });
  const keys = await generateClientKeys();
  const credentials: Record<string, ICredentialDataDecryptedObject> = {
    singpassSignApi: { environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(keys.signing), tenantId: 'acme', domainName: 'sign.example.sg' },
    singpassNotificationTokenApi: { secret: 'n8n-test-notification-secret-0123456789abcdef' },
  };
  const [[jwks]] = await new SingpassKeySet().execute.call(executeContext({ params: { sources: 'sign' }, credentials }));
  const fired: INodeExecutionData[][][] = [];
  const answers: SignSandbox['answers'] = [];
  const logs: string[] = [];
  const waiters: Array<() => void> = [];
  const trigger = new SingpassSignTrigger();
  // stateless unless a test gives the trigger its store (sessionRecords: 'store' and the store credential)
  const triggerParams: Record<string, unknown> = { sessionRecords: 'none' };
  const dsap: RunningServer = await listen(async (req, res, url) => {
    if (url.pathname === '/jwks') return void res.writeHead(200, jwks.json.headers as Record<string, string>).end(jwks.json.body as string);
    if (url.pathname !== '/webhook') return void res.writeHead(404).end();
    const rawBody = await readBody(req);
    await env.beforeDelivery?.();
    const ctx = mockDeep<IWebhookFunctions>();
    ctx.getNode.mockReturnValue({ ...testNode, typeVersion: env.triggerVersion });
    ctx.logger.warn.mockImplementation((m: string) => void logs.push(m));
    ctx.logger.error.mockImplementation((m: string) => void logs.push(m));
    const headers = env.rewriteHeaders ? env.rewriteHeaders({ ...req.headers }, rawBody) : req.headers;
    ctx.getRequestObject.mockReturnValue({ headers, rawBody } as never);
    ctx.getCredentials.mockImplementation(async (name: string) => {
      // n8n's own refusal when the node has no credential of that type
      if (!credentials[name]) throw new Error(`Node does not have any credentials set for "${name}"`);
      return credentials[name];
    });
    ctx.getNodeParameter.mockImplementation(((name: string, fallback?: unknown) => (name in triggerParams ? triggerParams[name] : fallback)) as IWebhookFunctions['getNodeParameter']);
    const answer: { status: number; body?: unknown } = { status: 0 };
    const response = {
      status(code: number) { answer.status = code; res.statusCode = code; return response; },
      json(body: unknown) { answer.body = body; res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(body)); return response; },
      end() { res.end(); return response; },
    };
    ctx.getResponseObject.mockReturnValue(response as never);
    const out = await trigger.webhook.call(ctx);
    answers.push(answer);
    if (out.workflowData) {
      fired.push(out.workflowData);
      waiters.splice(0).forEach((w) => w());
    }
  });
  sb.sign.registerClient({ clientId: 'n8n-dsap', jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
  let seen = 0;
  const env: SignSandbox = {
    sb, credentials, fired, answers, logs, triggerParams, triggerVersion: 2,
    async next(output, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (; seen < fired.length; seen++) if (fired[seen][output].length) return fired[seen++][output][0];
        if (Date.now() > deadline) throw new Error(`no trigger output ${output} within ${timeoutMs} ms`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
      }
    },
    async close() {
      await dsap.close();
      await sb.close();
    },
  };
  return env;
}
