import { listen, mount, readBody, sendBytes, sendJson, type SandboxService } from '../http';
import { createTestPki, type TestPki } from './ca';
import { OcspResponder } from './ocsp';
import { TimeStampAuthority } from './tsa';

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
    async handle(req, res, url) {
      const p = url.pathname;
      const method = req.method ?? 'GET';
      const cert = certs[p];
      if (cert && (method === 'GET' || method === 'HEAD')) return sendBytes(res, 200, cert, 'application/pkix-cert');

      if (p === '/ca/ocsp' || p.startsWith('/ca/ocsp/')) {
        let der: Buffer;
        if (method === 'POST' && p === '/ca/ocsp') der = await readBody(req, MAX_REQUEST);
        else if (method === 'GET' && p.startsWith('/ca/ocsp/')) {
          // RFC 6960 A.1: url-encoding of base64 of the DER request; some clients leave '+' '/' '=' raw.
          der = Buffer.from(decodeURIComponent(p.slice('/ca/ocsp/'.length)), 'base64');
        } else return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', error_description: 'use POST /ca/ocsp or GET /ca/ocsp/<base64>' });
        if (ocspDelay > 0) await new Promise((r) => setTimeout(r, ocspDelay));
        if (ocspDown) return sendBytes(res, 503, 'OCSP responder is down (sandbox fault switch)', 'text/plain');
        return sendBytes(res, 200, await ocsp.respond(der), 'application/ocsp-response', { 'cache-control': 'no-store' });
      }

      if (p === '/ca/tsa') {
        if (method !== 'POST') return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', error_description: 'POST a timestamp-query to /ca/tsa' });
        const body = await readBody(req, MAX_REQUEST);
        if (tsaDown) return sendBytes(res, 503, 'TSA is down (sandbox fault switch)', 'text/plain');
        return sendBytes(res, 200, await tsa.respond(body), 'application/timestamp-reply');
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
