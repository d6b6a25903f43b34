/**
 * Test helpers around the sandbox PKI that use tools we did not write (NSS certutil, OpenSSL), so suites can check
 * our output against independent implementations.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { TestPki } from '../../sandbox/pki';

const run = promisify(execFile);

/** Create an NSS database in `dir` trusting `rootPem` as a CA (CT,C,C) — e.g. for `pdfsig -nssdir <dir>`. */
export async function makeNssDb(dir: string, rootPem: string, nickname = 'Singpass Flows Sandbox Root CA'): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  const rootFile = path.join(dir, 'trusted-root.pem');
  fs.writeFileSync(rootFile, rootPem);
  await run('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password']);
  await run('certutil', ['-A', '-d', `sql:${dir}`, '-n', nickname, '-t', 'CT,C,C', '-i', rootFile]);
  return dir;
}

export interface PkiFiles {
  dir: string;
  root: string;
  intermediate: string;
  /** root + intermediate, PEM concatenated (an OpenSSL -CAfile for the whole hierarchy). */
  chain: string;
  tsa: string;
  tsaKey: string;
  ocspRoot: string;
  ocspRootKey: string;
  ocspIntermediate: string;
  ocspIntermediateKey: string;
  users: Record<string, { cert: string; key: string }>;
}

/** Write the PKI's certificates and keys as PEM files (`root.crt`, `intermediate.crt`, `tsa.crt`, ...) into `dir`. */
export function writePkiFiles(pki: TestPki, dir: string): PkiFiles {
  fs.mkdirSync(dir, { recursive: true });
  const w = (name: string, pem: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, pem, { mode: 0o600 });
    return file;
  };
  const users: PkiFiles['users'] = {};
  for (const [name, u] of Object.entries(pki.users)) {
    if (u) users[name] = { cert: w(`user-${name}.crt`, u.certPem), key: w(`user-${name}.key`, u.privateKeyPem) };
  }
  return {
    dir,
    root: w('root.crt', pki.root.certPem),
    intermediate: w('intermediate.crt', pki.intermediate.certPem),
    chain: w('chain.pem', pki.root.certPem + pki.intermediate.certPem),
    tsa: w('tsa.crt', pki.tsa.certPem),
    tsaKey: w('tsa.key', pki.tsa.privateKeyPem),
    ocspRoot: w('ocsp-root.crt', pki.ocspSigners.root.certPem),
    ocspRootKey: w('ocsp-root.key', pki.ocspSigners.root.privateKeyPem),
    ocspIntermediate: w('ocsp-intermediate.crt', pki.ocspSigners.intermediate.certPem),
    ocspIntermediateKey: w('ocsp-intermediate.key', pki.ocspSigners.intermediate.privateKeyPem),
    users,
  };
}

/** OpenSSL `index.txt` time format (YYMMDDHHMMSSZ). */
function indexTime(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
}

/** Reason names as OpenSSL's index.txt spells them (reasons it does not know are left out). */
const OPENSSL_REASONS: Record<string, string> = {
  unspecified: 'unspecified', keyCompromise: 'keyCompromise', cACompromise: 'CACompromise', affiliationChanged: 'affiliationChanged',
  superseded: 'superseded', cessationOfOperation: 'cessationOfOperation', certificateHold: 'certificateHold', removeFromCRL: 'removeFromCRL',
};

/** OpenSSL CA database lines for the certificates issued by the intermediate (valid `V` / revoked `R`). */
export function opensslIndex(pki: TestPki): string {
  const expiry = indexTime(new Date(Date.now() + 2 * 365 * 86_400_000));
  return pki
    .records()
    .filter((r) => r.issuer === 'intermediate')
    .map((r) => {
      const serial = (r.serialHex.length % 2 ? '0' + r.serialHex : r.serialHex).toUpperCase();
      const subject = '/' + r.subject.split(', ').join('/');
      const reason = r.reason ? OPENSSL_REASONS[r.reason] : undefined;
      const revoked = r.revokedAt ? `${indexTime(r.revokedAt)}${reason ? ',' + reason : ''}` : '';
      return [r.revokedAt ? 'R' : 'V', expiry, revoked, serial, 'unknown', subject].join('\t');
    })
    .join('\n') + '\n';
}

export interface OpensslOcspResponder {
  /** `http://127.0.0.1:<port>/ocsp` — pass as `createTestPki({ ocspUrl })`. */
  url: string;
  /** Attach the PKI (when the PKI had to be created after the responder, to embed `url` in its AIA). */
  setPki(pki: TestPki): void;
  /** Number of requests OpenSSL answered. */
  readonly requests: number;
  close(): Promise<void>;
}

/**
 * A real OpenSSL OCSP responder for the intermediate CA's certificates, behind a loopback HTTP wrapper (127.0.0.1,
 * port 0). Each request runs `openssl ocsp -index ... -reqin ... -respout ...` against an `index.txt` rebuilt from the
 * PKI (so later revocations show). `openssl ocsp -port` is never used: it binds every interface.
 *
 * Pass `undefined` for `pki` and call `setPki` later when the PKI's AIA must point at this responder:
 * `const r = await startOpensslOcspResponder(undefined, dir); const pki = await createTestPki({ baseUrl, ocspUrl: r.url }); r.setPki(pki);`
 */
export async function startOpensslOcspResponder(pki: TestPki | undefined, dir: string): Promise<OpensslOcspResponder> {
  fs.mkdirSync(dir, { recursive: true });
  let current = pki;
  let files: PkiFiles | undefined;
  let counter = 0;
  let answered = 0;

  const answer = async (der: Buffer): Promise<Buffer> => {
    if (!current) throw new Error('no PKI attached yet');
    files ??= writePkiFiles(current, path.join(dir, 'pki'));
    const work = fs.mkdtempSync(path.join(dir, `req-${++counter}-`));
    const index = path.join(work, 'index.txt');
    fs.writeFileSync(index, opensslIndex(current));
    const reqFile = path.join(work, 'req.der');
    const respFile = path.join(work, 'resp.der');
    fs.writeFileSync(reqFile, der);
    await run('openssl', [
      'ocsp', '-index', index, '-CA', files.intermediate, '-rsigner', files.ocspIntermediate, '-rkey', files.ocspIntermediateKey,
      '-reqin', reqFile, '-respout', respFile, '-nmin', '1440',
    ]);
    const resp = fs.readFileSync(respFile);
    fs.rmSync(work, { recursive: true, force: true });
    answered++;
    return resp;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      let der: Buffer | undefined;
      if (req.method === 'POST' && url.pathname === '/ocsp') der = Buffer.concat(chunks);
      else if (req.method === 'GET' && url.pathname.startsWith('/ocsp/')) der = Buffer.from(decodeURIComponent(url.pathname.slice(6)), 'base64');
      if (!der) {
        res.writeHead(404).end();
        return;
      }
      answer(der).then(
        (body) => res.writeHead(200, { 'content-type': 'application/ocsp-response', 'content-length': body.length }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/ocsp`,
    setPki(p) {
      current = p;
      files = undefined;
    },
    get requests() {
      return answered;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
