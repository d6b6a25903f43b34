/**
 * The notification URL the sandbox calls in the conformance suite: a small HTTP server on 127.0.0.1 between the
 * signing sandbox and the front end under test. It records every delivery (body, Bearer, sign_ref and request type
 * read from the JWT, the front end's answer) and passes it on; a delivery armed with `hold` is recorded and
 * acknowledged to the service (200) WITHOUT reaching the front end, so a test can present it later itself. `replay`
 * sends a recorded delivery to the front end as it came, with another Bearer, without one, or with another body,
 * and returns the front end's HTTP answer. It only routes: it verifies nothing.
 */
import type * as http from 'node:http';
import { listen, readBody, type RunningServer } from '../../sandbox/http';

export interface FrontEndAnswer {
  status: number;
  /** The answer's body as JSON (undefined when empty or not JSON). */
  body?: Record<string, unknown>;
}

export interface RecordedDelivery {
  signRef?: string;
  /** `user_cert`, `signed_doc_hash` or `error` (the JWT's `request_type`). */
  type?: string;
  /** The Bearer the service presented (the session's client_notification_token). */
  bearer?: string;
  contentType: string;
  body: Buffer;
  /** Held: acknowledged to the service by the relay, never passed on. */
  held: boolean;
  /** The front end's answer when it was passed on. */
  answer?: FrontEndAnswer;
}

export interface ReplayOptions {
  /** Present this Bearer instead of the recorded one; `null`: no Authorization header at all. */
  bearer?: string | null;
  /** Send this body instead of the recorded one. */
  body?: string | Buffer;
}

export interface ConformanceRelay {
  /** Register this with the sandbox as the DSAP's notification URL. */
  url: string;
  /** Where deliveries are passed on (the front end's webhook URL); set once the front end is up. */
  target?: string;
  /** The next delivery of `type` for `signRef` is recorded and answered 200 by the relay, not passed on. */
  hold(signRef: string, type: string): void;
  /** Every delivery recorded for `signRef` (or all), oldest first. */
  deliveries(signRef?: string): RecordedDelivery[];
  /** The first recorded delivery of `type` for `signRef`, waiting for it to arrive. */
  delivery(signRef: string, type: string, timeoutMs?: number): Promise<RecordedDelivery>;
  /** Present a recorded delivery to the front end again (as it came unless told otherwise): its answer. */
  replay(d: RecordedDelivery, o?: ReplayOptions): Promise<FrontEndAnswer>;
  close(): Promise<void>;
}

export async function startConformanceRelay(): Promise<ConformanceRelay> {
  const recorded: RecordedDelivery[] = [];
  const holds = new Set<string>();
  const key = (signRef: string, type: string) => `${type} ${signRef}`;

  const server: RunningServer = await listen(async (req, res, url) => {
    if (req.method !== 'POST' || url.pathname !== '/notify') return void res.writeHead(404).end();
    await relay(req, res);
  });

  async function relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    const auth = typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined;
    const d: RecordedDelivery = {
      ...jwtClaims(body),
      bearer: auth?.replace(/^Bearer\s+/i, ''),
      contentType: String(req.headers['content-type'] ?? 'application/json'),
      body,
      held: false,
    };
    recorded.push(d);
    if (d.signRef !== undefined && d.type !== undefined && holds.delete(key(d.signRef, d.type))) {
      d.held = true;
      return void res.writeHead(200, { 'content-length': '0' }).end();
    }
    if (!out.target) return void res.writeHead(502).end(); // no front end yet: the service retries a 502
    d.answer = await present(d, {});
    res.writeHead(d.answer.status, { 'content-type': 'application/json' }).end(d.answer.body === undefined ? '' : JSON.stringify(d.answer.body));
  }

  async function present(d: RecordedDelivery, o: ReplayOptions): Promise<FrontEndAnswer> {
    const headers: Record<string, string> = { 'content-type': d.contentType };
    const bearer = o.bearer === undefined ? d.bearer : o.bearer;
    if (bearer !== null && bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    const body = o.body === undefined ? d.body : Buffer.from(o.body);
    try {
      const r = await fetch(out.target!, { method: 'POST', headers, body: new Uint8Array(body) });
      const text = await r.text();
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: r.status, body: parsed };
    } catch {
      return { status: 502 }; // the front end not reachable
    }
  }

  const out: ConformanceRelay = {
    url: `${server.baseUrl}/notify`,
    hold: (signRef, type) => void holds.add(key(signRef, type)),
    deliveries: (signRef) => recorded.filter((d) => signRef === undefined || d.signRef === signRef),
    async delivery(signRef, type, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const d = recorded.find((x) => x.signRef === signRef && x.type === type && (x.held || x.answer !== undefined));
        if (d) return d;
        if (Date.now() > end) throw new Error(`no ${type} delivery for ${signRef} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    replay: (d, o = {}) => present(d, o),
    close: () => server.close(),
  };
  return out;
}

/** sign_ref and request type of a delivery, read from the JWT's payload (not verified: the relay only routes). */
function jwtClaims(body: Buffer): { signRef?: string; type?: string } {
  try {
    const token = (JSON.parse(body.toString('utf8')) as { token: string }).token;
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    return {
      signRef: typeof payload.sign_ref === 'string' ? payload.sign_ref : undefined,
      type: typeof payload.request_type === 'string' ? payload.request_type : undefined,
    };
  } catch {
    return {};
  }
}
