/**
 * An independent test PKI built with the OpenSSL CLI (not our code, not the sandbox's): root -> intermediate ->
 * users/TSA, a real `openssl ocsp` responder (delegated responder cert for the intermediate's certs, root-signed
 * answers for the intermediate) and `openssl ts -reply` as TSA, behind a loopback HTTP wrapper on an ephemeral port.
 * The intermediate also publishes a CRL (`openssl ca -gencrl` over the same index) at `/int.crl`, named by the users
 * `crlonly` and `crlrevoked`, whose certificates have a CRL Distribution Point and no OCSP URL, and by `both`, whose
 * certificate names the OCSP responder as well.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface OpensslCa {
  dir: string;
  baseUrl: string;
  /** PEM paths and DER bytes */
  root: { pem: string; der: Buffer };
  intermediate: { pem: string; der: Buffer };
  /** The intermediate's name and key, re-certified by the root with a key usage that lacks cRLSign. */
  intermediateNoCrlSign: { pem: string; der: Buffer };
  ocspSigner: { pem: string; der: Buffer };
  tsa: { pem: string; der: Buffer };
  users: Record<'good' | 'revoked' | 'unknown' | 'noaia' | 'crlonly' | 'crlrevoked' | 'both' | 'later' | 'compromised', { pem: string; key: string; der: Buffer; serial: string }>;
  /** Where the intermediate's CRL is served (what `crlonly`/`crlrevoked` name in their CRL Distribution Points). */
  crlUrl: string;
  /** `ocspSigner`: who signs the intermediate's OCSP answers — its delegated responder (default), the TSA (issued by
   * the CA but not for OCSP signing), or a look-alike responder the CA never issued. */
  /** `crl`: what `/int.crl` serves — the intermediate's CRL (default), one signed by a look-alike CA (same name,
   * another key), the root's CRL (another issuer), garbage, or HTTP 404; valid one day. `crlPem`: served as PEM. */
  faults: { ocspDown: boolean; tsaDown: boolean; ocspGarbage: boolean; ocspSigner: 'responder' | 'tsa' | 'look-alike'; ocspResponderId: 'name' | 'key'; crl: 'ok' | 'look-alike' | 'root' | 'garbage' | '404'; crlPem: boolean };
  requests: { ocsp: number; tsa: number; certs: number; crl: number };
  /**
   * Mark a user revoked (keyCompromise) as of `at` in the CA's index: its OCSP answers and CRLs say so from now on.
   * `compromisedAt`: also an invalidity date (OpenSSL's "keyTime"), which the answers carry as invalidityDate.
   */
  revoke(user: keyof OpensslCa['users'], at: Date, compromisedAt?: Date): void;
  close(): Promise<void>;
}

function ossl(dir: string, args: string[]): string {
  return execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

function der(dir: string, pem: string): Buffer {
  return execFileSync('openssl', ['x509', '-in', pem, '-outform', 'DER'], { cwd: dir });
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startOpensslCa(): Promise<OpensslCa> {
  const dir = mkdtempSync(join(tmpdir(), 'ltv-ossl-'));
  const faults: OpensslCa['faults'] = { ocspDown: false, tsaDown: false, ocspGarbage: false, ocspSigner: 'responder', ocspResponderId: 'name', crl: 'ok', crlPem: false };
  const requests = { ocsp: 0, tsa: 0, certs: 0, crl: 0 };
  let seq = 0;
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const reply = (status: number, type: string, data: Buffer): void => {
      res.writeHead(status, { 'content-type': type, 'content-length': data.length });
      res.end(data);
    };
    try {
      if (req.method === 'GET' && /^\/(root|int)\.crt$/.test(url)) {
        requests.certs++;
        return reply(200, 'application/pkix-cert', der(dir, url === '/root.crt' ? 'root.crt' : 'int.crt'));
      }
      if (req.method === 'POST' && (url === '/ocsp' || url === '/ocsp-root')) {
        requests.ocsp++;
        const data = await body(req);
        if (faults.ocspDown) return reply(503, 'text/plain', Buffer.from('down'));
        if (faults.ocspGarbage) return reply(200, 'application/ocsp-response', Buffer.from('not der'));
        const n = ++seq;
        writeFileSync(join(dir, `req${n}.der`), data);
        const rsigner = { responder: 'ocsp', tsa: 'tsa', 'look-alike': 'lookalike' }[faults.ocspSigner];
        const signer = url === '/ocsp' ? ['-CA', 'int.crt', '-index', 'index-int.txt', '-rsigner', `${rsigner}.crt`, '-rkey', `${rsigner}.key`] : ['-CA', 'root.crt', '-index', 'index-root.txt', '-rsigner', 'root.crt', '-rkey', 'root.key'];
        const byKey = faults.ocspResponderId === 'key' ? ['-resp_key_id'] : [];
        await run('openssl', ['ocsp', ...signer, ...byKey, '-reqin', `req${n}.der`, '-respout', `resp${n}.der`, '-nmin', '60', '-rother', 'int.crt'], { cwd: dir });
        return reply(200, 'application/ocsp-response', readFileSync(join(dir, `resp${n}.der`)));
      }
      if (req.method === 'GET' && url === '/int.crl') {
        requests.crl++;
        if (faults.crl === '404') return reply(404, 'text/plain', Buffer.from('no such CRL'));
        if (faults.crl === 'garbage') return reply(200, 'application/pkix-crl', Buffer.from('this is not a CRL'));
        const n = ++seq;
        const ca = { ok: ['-name', 'int_ca', '-cert', 'int.crt', '-keyfile', 'int.key'], 'look-alike': ['-name', 'int_ca', '-cert', 'lookalike-int.crt', '-keyfile', 'lookalike-int.key'], root: ['-name', 'root_ca', '-cert', 'root.crt', '-keyfile', 'root.key'] }[faults.crl];
        await run('openssl', ['ca', '-gencrl', '-config', 'ca.cnf', ...ca, '-crldays', '1', '-out', `crl${n}.pem`], { cwd: dir });
        const crl = faults.crlPem ? readFileSync(join(dir, `crl${n}.pem`)) : (await run('openssl', ['crl', '-in', `crl${n}.pem`, '-outform', 'DER'], { cwd: dir, encoding: 'buffer' })).stdout;
        return reply(200, 'application/pkix-crl', crl);
      }
      if (req.method === 'POST' && url === '/tsa') {
        requests.tsa++;
        const data = await body(req);
        if (faults.tsaDown) return reply(503, 'text/plain', Buffer.from('down'));
        const n = ++seq;
        writeFileSync(join(dir, `q${n}.tsq`), data);
        await run('openssl', ['ts', '-reply', '-config', 'ts.cnf', '-queryfile', `q${n}.tsq`, '-inkey', 'tsa.key', '-signer', 'tsa.crt', '-out', `r${n}.tsr`], { cwd: dir });
        return reply(200, 'application/timestamp-reply', readFileSync(join(dir, `r${n}.tsr`)));
      }
      reply(404, 'text/plain', Buffer.from('not found'));
    } catch (e) {
      reply(500, 'text/plain', Buffer.from(String(e)));
    }
  };
  const server: Server = createServer((req, res) => void handler(req, res));
  // Node closes idle keep-alive sockets after 5 s; a client reusing one just then (a slow step on a loaded machine)
  // gets ECONNRESET. Idle sockets live longer than any test here; close() drops them.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  writeFileSync(join(dir, 'ext.cnf'), `
[v3_int]
basicConstraints=critical,CA:TRUE,pathlen:0
keyUsage=critical,keyCertSign,cRLSign
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
authorityInfoAccess=caIssuers;URI:${baseUrl}/root.crt,OCSP;URI:${baseUrl}/ocsp-root
[v3_user]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
authorityInfoAccess=caIssuers;URI:${baseUrl}/int.crt,OCSP;URI:${baseUrl}/ocsp
[v3_crl]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
authorityInfoAccess=caIssuers;URI:${baseUrl}/int.crt
crlDistributionPoints=URI:${baseUrl}/int.crl
[v3_both]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
authorityInfoAccess=caIssuers;URI:${baseUrl}/int.crt,OCSP;URI:${baseUrl}/ocsp
crlDistributionPoints=URI:${baseUrl}/int.crl
[v3_int_nocrlsign]
basicConstraints=critical,CA:TRUE,pathlen:0
keyUsage=critical,keyCertSign
[v3_noaia]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
[v3_ocsp]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,OCSPSigning
noCheck=ignored
[v3_tsa]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,nonRepudiation
extendedKeyUsage=critical,timeStamping
authorityInfoAccess=caIssuers;URI:${baseUrl}/int.crt,OCSP;URI:${baseUrl}/ocsp
`);
  writeFileSync(join(dir, 'ts.cnf'), `
[tsa]
default_tsa = tsa_config1
[tsa_config1]
serial = ${dir}/tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`);
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  // `openssl ca -gencrl` reads the same index files as the OCSP responder.
  writeFileSync(join(dir, 'ca.cnf'), `
[int_ca]
database = ${dir}/index-int.txt
default_md = sha256
[root_ca]
database = ${dir}/index-root.txt
default_md = sha384
`);
  const key = (name: string, curve = 'P-256'): void => { ossl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${curve}`, '-out', `${name}.key`]); };
  const serials: Record<string, string> = {};
  const issue = (name: string, subj: string, ca: string, ext: string): void => {
    ossl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subj, '-out', `${name}.csr`]);
    const serial = randomBytes(8).toString('hex').replace(/^./, '1').toUpperCase();
    serials[name] = serial;
    ossl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-set_serial', `0x${serial}`, '-days', '365', '-sha256', '-extfile', 'ext.cnf', '-extensions', ext, '-out', `${name}.crt`]);
  };
  key('root', 'P-384');
  ossl(dir, ['req', '-x509', '-new', '-key', 'root.key', '-subj', '/CN=LTV Test Root/O=Independent OpenSSL CA/C=SG', '-days', '3650', '-sha384',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', 'root.crt']);
  key('int'); issue('int', '/CN=LTV Test Intermediate/O=Independent OpenSSL CA/C=SG', 'root', 'v3_int');
  ossl(dir, ['x509', '-req', '-in', 'int.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-set_serial', '0x7E57', '-days', '365', '-sha256', '-extfile', 'ext.cnf', '-extensions', 'v3_int_nocrlsign', '-out', 'int-nocrlsign.crt']);
  key('ocsp'); issue('ocsp', '/CN=LTV Test OCSP Responder/C=SG', 'int', 'v3_ocsp');
  key('tsa'); issue('tsa', '/CN=LTV Test TSA/C=SG', 'int', 'v3_tsa');
  // same subject and EKU as the real responder, self-signed: only its issuer's signature tells them apart
  key('lookalike');
  ossl(dir, ['req', '-x509', '-new', '-key', 'lookalike.key', '-subj', '/CN=LTV Test OCSP Responder/C=SG', '-days', '365', '-sha256', '-addext', 'extendedKeyUsage=OCSPSigning', '-out', 'lookalike.crt']);
  // a CA with the intermediate's name and another key: what signs a forged CRL
  key('lookalike-int');
  ossl(dir, ['req', '-x509', '-new', '-key', 'lookalike-int.key', '-subj', '/CN=LTV Test Intermediate/O=Independent OpenSSL CA/C=SG', '-days', '365', '-sha256',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', 'lookalike-int.crt']);
  const extOf = { good: 'v3_user', revoked: 'v3_user', unknown: 'v3_user', noaia: 'v3_noaia', crlonly: 'v3_crl', crlrevoked: 'v3_crl', both: 'v3_both', later: 'v3_user', compromised: 'v3_user' } as const;
  for (const u of ['good', 'revoked', 'unknown', 'noaia', 'crlonly', 'crlrevoked', 'both', 'later', 'compromised'] as const) {
    key(u);
    issue(u, `/CN=User ${u}/serialNumber=S1234567${u.length}/C=SG`, 'int', extOf[u]);
  }
  const line = (status: 'V' | 'R', name: string): string => `${status}\t301231000000Z\t${status === 'R' ? '240101000000Z,keyCompromise' : ''}\t${serials[name]}\tunknown\t/CN=${name}\n`;
  // "unknown" is deliberately absent from the index: the responder must answer unknown for it.
  writeFileSync(join(dir, 'index-int.txt'), line('V', 'good') + line('R', 'revoked') + line('V', 'tsa') + line('V', 'ocsp') + line('V', 'noaia') + line('V', 'crlonly') + line('R', 'crlrevoked') + line('V', 'both') + line('V', 'later') + line('V', 'compromised'));
  writeFileSync(join(dir, 'index-root.txt'), line('V', 'int'));

  const load = (n: string): { pem: string; der: Buffer } => ({ pem: join(dir, `${n}.crt`), der: der(dir, `${n}.crt`) });
  const user = (n: string) => ({ ...load(n), key: join(dir, `${n}.key`), serial: serials[n]! });
  return {
    dir, baseUrl, faults, requests,
    root: load('root'), intermediate: load('int'), intermediateNoCrlSign: load('int-nocrlsign'), ocspSigner: load('ocsp'), tsa: load('tsa'),
    users: { good: user('good'), revoked: user('revoked'), unknown: user('unknown'), noaia: user('noaia'), crlonly: user('crlonly'), crlrevoked: user('crlrevoked'), both: user('both'), later: user('later'), compromised: user('compromised') },
    revoke: (name, at, compromisedAt) => {
      const index = join(dir, 'index-int.txt');
      const utc = (d: Date) => d.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1$2$3$4$5$6Z');
      const generalized = (d: Date) => d.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z'); // YYYYMMDDHHMMSSZ
      const reason = compromisedAt ? `keyTime,${generalized(compromisedAt)}` : 'keyCompromise';
      const lines = readFileSync(index, 'utf8').split('\n').map((l) => {
        const f = l.split('\t');
        return f[3] === serials[name] ? ['R', f[1], `${utc(at)},${reason}`, ...f.slice(3)].join('\t') : l;
      });
      writeFileSync(index, lines.join('\n'));
    },
    crlUrl: `${baseUrl}/int.crl`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
