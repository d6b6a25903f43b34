/**
 * A small HTTP server on 127.0.0.1 between the signing sandbox and a queue-mode n8n, for tests and the bench:
 * - `POST /hook`: the service's webhook deliveries, passed to the n8n webhook process (the answer passed back, and
 *   timed); a delivery armed with `raceNext(signRef)` is ALSO handed to the main process at the same moment (each
 *   process takes it: two executions race on one record);
 * - `POST /signed/<signRef>`: where the workflow delivers signed PDFs (a document system every worker can reach);
 * - `GET /jwks`: the DSAP's public key set as a static file (`keySet`), as docs/n8n-queue-mode.md advises for queue
 *   mode: the key-set workflow would run on a worker, and a saturated worker answers the service's fetch too late.
 */
import type * as http from 'node:http';
import { listen, readBody, type RunningServer } from '../../sandbox/http';

export interface DeliveryRelay {
  baseUrl: string;
  /** Signed PDFs received, per signRef, in order (a second one for a session would be a duplicate). */
  signed: Map<string, Buffer[]>;
  /** Every relayed delivery: sign_ref, request type, the n8n answers' statuses and the webhook process's answer time. */
  deliveries: Array<{ signRef?: string; type?: string; statuses: number[]; ms: number }>;
  /** The next user_cert delivery for `signRef` goes to the webhook process and to main at once. */
  raceNext(signRef: string): void;
  /**
   * Hand the last user_cert delivery relayed for `signRef` again, as it came (same body and Bearer), to the main
   * process (another process than the one that took it first, whose duplicate check is its own): what the service
   * does when an answer came late, through a load balancer. Resolves with n8n's answer status.
   */
  redeliverCertificate(signRef: string): Promise<number>;
  /** What `GET /jwks` serves (503 while unset). */
  keySet?: unknown;
  close(): Promise<void>;
}

export async function startDeliveryRelay(targets: { webhookUrl: () => string; mainUrl: () => string }): Promise<DeliveryRelay> {
  const signed = new Map<string, Buffer[]>();
  const deliveries: DeliveryRelay['deliveries'] = [];
  const race = new Set<string>();
  const lastCertificate = new Map<string, { body: Buffer; headers: Record<string, string> }>();
  const server: RunningServer = await listen(async (req, res, url) => {
    if (req.method === 'POST' && url.pathname.startsWith('/signed/')) {
      const ref = decodeURIComponent(url.pathname.slice('/signed/'.length));
      signed.set(ref, [...(signed.get(ref) ?? []), await readBody(req)]);
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"stored":true}');
    }
    if (req.method === 'POST' && url.pathname === '/hook') return relay(req, res);
    if (req.method === 'GET' && url.pathname === '/jwks') {
      if (!out.keySet) return void res.writeHead(503).end();
      return void res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify(out.keySet));
    }
    res.writeHead(404).end();
  });

  async function relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    const headers = { 'content-type': String(req.headers['content-type'] ?? 'application/json'), authorization: String(req.headers.authorization ?? '') };
    const claims = jwtClaims(body);
    if (claims.type === 'user_cert' && claims.signRef !== undefined) lastCertificate.set(claims.signRef, { body, headers });
    const raced = claims.type === 'user_cert' && claims.signRef !== undefined && race.delete(claims.signRef);
    const to = [`${targets.webhookUrl()}/webhook/singpass-sign/webhook`, ...(raced ? [`${targets.mainUrl()}/webhook/singpass-sign/webhook`] : [])];
    const started = performance.now();
    const answers = await Promise.all(to.map(async (t) => {
      try {
        const r = await fetch(t, { method: 'POST', headers, body: new Uint8Array(body) });
        return { status: r.status, text: await r.text() };
      } catch {
        return { status: 502, text: '' }; // n8n not reachable: the service retries a 502
      }
    }));
    deliveries.push({ ...claims, statuses: answers.map((a) => a.status), ms: performance.now() - started });
    res.writeHead(answers[0].status, { 'content-type': 'application/json' }).end(answers[0].text);
  }

  const out: DeliveryRelay = {
    baseUrl: server.baseUrl,
    signed,
    deliveries,
    raceNext: (signRef) => { race.add(signRef); },
    async redeliverCertificate(signRef) {
      const d = lastCertificate.get(signRef);
      if (!d) throw new Error(`no certificate delivery relayed for ${signRef}`);
      const r = await fetch(`${targets.mainUrl()}/webhook/singpass-sign/webhook`, { method: 'POST', headers: d.headers, body: new Uint8Array(d.body) });
      await r.text();
      return r.status;
    },
    close: () => server.close(),
  };
  return out;
}

/** sign_ref and request type of a delivery, read (not verified: the relay only routes). */
function jwtClaims(body: Buffer): { signRef?: string; type?: string } {
  try {
    const token = (JSON.parse(body.toString('utf8')) as { token: string }).token;
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
    return { signRef: typeof payload.sign_ref === 'string' ? payload.sign_ref : undefined, type: typeof payload.request_type === 'string' ? payload.request_type : undefined };
  } catch {
    return {};
  }
}
