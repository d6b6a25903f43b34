import { listen, mount, readBody, sendBytes, sendJson, type SandboxService } from '../http';
import { createTestPki, type TestPki } from './ca';
import { OcspResponder } from './ocsp';
import { isTsaFailure, TimeStampAuthority, tsaRejection, type TsaFailure } from './tsa';

/** The `/ca` sandbox service plus its fault switches (for tests of outage handling). */
export interface PkiService extends SandboxService {
  ocsp: OcspResponder;
  tsa: TimeStampAuthority;
  /** OCSP answers HTTP 503 while down. */
  setOcspDown(down: boolean): void;
  /** TSA answers HTTP 503 while down. */
  setTsaDown(down: boolean): void;
  /** Delay every OCSP answer by `ms` (timeouts). */
  setOcspDelay(ms: number): void;
  /**
   * Fail the next `n` requests to the TSA or the OCSP responder, then recover: a responder that is down for a
   * moment. `failure`: an HTTP status (default 503), or for the TSA an RFC 3161 PKIFailureInfo name answered as a
   * `rejection` (HTTP 200): `'systemFailure'`, `'timeNotAvailable'`, `'addInfoNotAvailable'` say "not now";
   * `'badRequest'`, `'badAlg'`… refuse the request (with a large `n`: a TSA refusing for good).
   */
  failNext(responder: 'tsa' | 'ocsp', n: number, failure?: number | TsaFailure): void;
  /**
   * A TSA overwhelmed by load: while `limit` requests are being answered, any further one gets a `rejection` with
   * `failure` (default systemFailure). `false` turns it off. Counted in `requestCounts().tsaBusy`.
   */
  setTsaBusy(limit: number | false, failure?: TsaFailure): void;
  /** Requests each responder answered since start (failed ones included). */
  requestCounts(): { tsa: number; ocsp: number; tsaBusy: number };
}

const MAX_REQUEST = 64 * 1024;

/**
 * HTTP face of the test PKI under `/ca`: `POST /ca/ocsp`, `GET /ca/ocsp/<base64>` (RFC 6960 A.1), `POST /ca/tsa`
 * (RFC 3161 over HTTP), and the DER certificates `/ca/root.crt`, `/ca/intermediate.crt`, `/ca/tsa.crt`.
 */
export function createPkiService(pki: TestPki): PkiService {
  const ocsp = new OcspResponder(pki);
  const tsa = new TimeStampAuthority(pki);
  let ocspDown = false;
  let tsaDown = false;
  let ocspDelay = 0;
  const failing = { tsa: { n: 0, failure: 503 as number | TsaFailure }, ocsp: { n: 0, failure: 503 as number | TsaFailure } };
  const counts = { tsa: 0, ocsp: 0, tsaBusy: 0 };
  const failNext = (responder: 'tsa' | 'ocsp', n: number, failure: number | TsaFailure = 503): void => {
    if (!Number.isInteger(n) || n < 0) throw new Error('failNext: n must be a whole number');
    if (typeof failure === 'string' ? responder !== 'tsa' || !isTsaFailure(failure) : !(Number.isInteger(failure) && failure >= 400 && failure <= 599)) {
      throw new Error('failNext: failure must be an HTTP status 400-599 (or, for the TSA, an RFC 3161 PKIFailureInfo name)');
    }
    failing[responder] = { n, failure };
  };
  // Requests the TSA is answering right now, and the load above which it refuses (setTsaBusy).
  let tsaInFlight = 0;
  let tsaBusy: { limit: number; failure: TsaFailure } | undefined;
  /** Takes one pending failure of `responder`, if any. */
  const takeFailure = (responder: 'tsa' | 'ocsp'): number | TsaFailure | undefined => {
    const f = failing[responder];
    if (f.n <= 0) return undefined;
    f.n--;
    return f.failure;
  };
  const certs: Record<string, Buffer> = {
    '/ca/root.crt': pki.root.certDer,
    '/ca/intermediate.crt': pki.intermediate.certDer,
    '/ca/tsa.crt': pki.tsa.certDer,
    '/ca/ocsp-root.crt': pki.ocspSigners.root.certDer,
    '/ca/ocsp-intermediate.crt': pki.ocspSigners.intermediate.certDer,
  };

  return {
    prefix: '/ca',
    ocsp,
    tsa,
    setOcspDown: (down) => { ocspDown = down; },
    setTsaDown: (down) => { tsaDown = down; },
    setOcspDelay: (ms) => { ocspDelay = Math.max(0, ms); },
    failNext,
    setTsaBusy: (limit, failure = 'systemFailure') => {
      if (limit !== false && !(Number.isInteger(limit) && limit >= 0)) throw new Error('setTsaBusy: limit must be a whole number or false');
      if (!isTsaFailure(failure)) throw new Error('setTsaBusy: failure must be an RFC 3161 PKIFailureInfo name');
      tsaBusy = limit === false ? undefined : { limit, failure };
    },
    requestCounts: () => ({ ...counts }),
    async handle(req, res, url) {
      const p = url.pathname;
      const method = req.method ?? 'GET';
      const cert = certs[p];
      if (cert && (method === 'GET' || method === 'HEAD')) return sendBytes(res, 200, cert, 'application/pkix-cert');

      // Fault switches over HTTP (for a DSAP in another process): {"tsa_fail": n, "tsa_failure": 503 | "systemFailure"
      // | "timeNotAvailable" | "badRequest" | …, "tsa_busy": limit | false, "tsa_busy_failure": "systemFailure" | …,
      // "ocsp_fail": n, "ocsp_failure": 503}; answers the pending counts.
      if (p === '/ca/faults' && method === 'POST') {
        let b: Record<string, unknown>;
        try {
          b = JSON.parse((await readBody(req, MAX_REQUEST)).toString('utf8') || '{}') as Record<string, unknown>;
          for (const r of ['tsa', 'ocsp'] as const) {
            const n = b[`${r}_fail`];
            if (n === undefined) continue;
            if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 1000) throw new Error(`${r}_fail must be a whole number 0-1000`);
            const f = b[`${r}_failure`] ?? 503;
            if (typeof f !== 'number' && !isTsaFailure(f)) throw new Error(`${r}_failure must be an HTTP status or an RFC 3161 PKIFailureInfo name`);
            failNext(r, n, f);
          }
          if (b.tsa_busy !== undefined) {
            const f = b.tsa_busy_failure ?? 'systemFailure';
            if (b.tsa_busy !== false && (typeof b.tsa_busy !== 'number' || !Number.isInteger(b.tsa_busy) || b.tsa_busy < 0)) throw new Error('tsa_busy must be a whole number or false');
            if (!isTsaFailure(f)) throw new Error('tsa_busy_failure must be an RFC 3161 PKIFailureInfo name');
            tsaBusy = b.tsa_busy === false ? undefined : { limit: b.tsa_busy, failure: f };
          }
        } catch (e) {
          return sendJson(res, 400, { error: 'INVALID_REQUEST', error_description: (e as Error).message });
        }
        return sendJson(res, 200, { tsa_fail: failing.tsa.n, ocsp_fail: failing.ocsp.n, requests: counts });
      }

      if (p === '/ca/ocsp' || p.startsWith('/ca/ocsp/')) {
        let der: Buffer;
        if (method === 'POST' && p === '/ca/ocsp') der = await readBody(req, MAX_REQUEST);
        else if (method === 'GET' && p.startsWith('/ca/ocsp/')) {
          // RFC 6960 A.1: url-encoding of base64 of the DER request; some clients leave '+' '/' '=' raw.
          der = Buffer.from(decodeURIComponent(p.slice('/ca/ocsp/'.length)), 'base64');
        } else return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', error_description: 'use POST /ca/ocsp or GET /ca/ocsp/<base64>' });
        counts.ocsp++;
        if (ocspDelay > 0) await new Promise((r) => setTimeout(r, ocspDelay));
        if (ocspDown) return sendBytes(res, 503, 'OCSP responder is down (sandbox fault switch)', 'text/plain');
        const failure = takeFailure('ocsp');
        if (typeof failure === 'number') return sendBytes(res, failure, 'OCSP responder failed this request (sandbox fault switch)', 'text/plain');
        return sendBytes(res, 200, await ocsp.respond(der), 'application/ocsp-response', { 'cache-control': 'no-store' });
      }

      if (p === '/ca/tsa') {
        if (method !== 'POST') return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', error_description: 'POST a timestamp-query to /ca/tsa' });
        const body = await readBody(req, MAX_REQUEST);
        counts.tsa++;
        if (tsaDown) return sendBytes(res, 503, 'TSA is down (sandbox fault switch)', 'text/plain');
        const failure = takeFailure('tsa');
        if (typeof failure === 'string') return sendBytes(res, 200, await tsaRejection(failure, `TSA refused this request: ${failure} (sandbox fault switch)`), 'application/timestamp-reply');
        if (failure !== undefined) return sendBytes(res, failure, 'TSA failed this request (sandbox fault switch)', 'text/plain');
        if (tsaBusy && tsaInFlight >= tsaBusy.limit) {
          counts.tsaBusy++;
          return sendBytes(res, 200, await tsaRejection(tsaBusy.failure, `TSA overloaded: ${tsaBusy.failure} (sandbox fault switch)`), 'application/timestamp-reply');
        }
        tsaInFlight++;
        try {
          return sendBytes(res, 200, await tsa.respond(body), 'application/timestamp-reply');
        } finally {
          tsaInFlight--;
        }
      }
      return sendJson(res, 404, { error: 'NOT_FOUND', error_description: `no PKI route for ${method} ${p}` });
    },
  };
}

export interface RunningPkiServer {
  pki: TestPki;
  service: PkiService;
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * Start a stand-alone PKI server on 127.0.0.1. It listens first (port 0 = ephemeral) and only then creates the PKI,
 * because the AIA URLs inside the certificates need the real port.
 */
export async function startPkiServer(opts: { port?: number; dir?: string; ocspUrl?: string } = {}): Promise<RunningPkiServer> {
  let handler: ReturnType<typeof mount> | undefined;
  const server = await listen(async (req, res, url) => {
    if (!handler) return sendJson(res, 503, { error: 'STARTING', error_description: 'PKI is being created' });
    return handler(req, res, url);
  }, opts.port ?? 0);
  try {
    const pki = await createTestPki({ baseUrl: server.baseUrl, dir: opts.dir, ocspUrl: opts.ocspUrl });
    const service = createPkiService(pki);
    handler = mount([service]);
    return { pki, service, baseUrl: server.baseUrl, close: () => server.close() };
  } catch (err) {
    await server.close();
    throw err;
  }
}
