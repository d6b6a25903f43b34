import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPkiServer, type RunningPkiServer } from '../../../sandbox/pki';
import { makeNssDb, writePkiFiles, type PkiFiles } from '../../helpers/pki-tools';
import { tool } from './openssl';

// NSS (what pdfsig uses) as a second independent oracle: it fetches the intermediate from the AIA caIssuers URL and
// checks revocation through the AIA OCSP URL (NSS sends OCSP as GET /ca/ocsp/<base64>).
let srv: RunningPkiServer;
let files: PkiFiles;
let nss: string;
let tmp: string;
const seen: string[] = [];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-nss-'));
  srv = await startPkiServer();
  const handle = srv.service.handle;
  srv.service.handle = (req, res, url) => {
    seen.push(`${req.method} ${url.pathname.startsWith('/ca/ocsp/') ? '/ca/ocsp/<b64>' : url.pathname}`);
    return handle(req, res, url);
  };
  files = writePkiFiles(srv.pki, path.join(tmp, 'files'));
  nss = await makeNssDb(path.join(tmp, 'nss'), srv.pki.root.certPem);
});
afterAll(async () => {
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const vfychain = (cert: string, scope: 'leaf' | 'chain' = 'leaf') =>
  tool('vfychain', ['-d', `sql:${nss}`, '-pp', '-f', '-u', '4', '-g', scope, '-h', 'requireFreshInfo', '-m', 'ocsp', '-s', 'failIfNoInfo', '-a', cert]);

describe('NSS vfychain with AIA fetching and mandatory OCSP', () => {
  it('accepts a good user certificate (intermediate fetched via AIA, OCSP via GET)', async () => {
    const r = await vfychain(files.users.p256!.cert);
    expect(r.out).toContain('Chain is good!');
    expect(seen).toContain('GET /ca/intermediate.crt');
    expect(seen).toContain('GET /ca/ocsp/<b64>');
  });

  it('accepts the P-384 and RSA users, checking OCSP for the whole chain', async () => {
    expect((await vfychain(files.users.p384!.cert, 'chain')).out).toContain('Chain is good!');
    expect((await vfychain(files.users.rsa!.cert, 'chain')).out).toContain('Chain is good!');
  });

  it('reports the revoked user as revoked', async () => {
    const r = await vfychain(files.users.revoked!.cert);
    expect(r.out).not.toContain('Chain is good!');
    expect(r.out).toContain('has been revoked');
  });

  it('fails closed when the OCSP responder is down', async () => {
    srv.service.setOcspDown(true);
    try {
      const r = await vfychain(files.users.p256!.cert);
      expect(r.out).not.toContain('Chain is good!');
    } finally {
      srv.service.setOcspDown(false);
    }
  });
});
