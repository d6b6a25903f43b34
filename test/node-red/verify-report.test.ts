/**
 * The *verify PDF* node's report: a valid B-LTA has notes (what B-LT/B-LTA appended after the signature) and no
 * problems; a PDF whose page was changed after signing goes to the Catch node with the problem in plain words.
 */
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { addValidationData } from '../../src/pades/ltv';
import { changePageContent, samplePdf, signToLevel } from '../pades/ltv-helpers';
import { caught, catchNode, configNodes, getNode, helper, keys, nextMessage, positioned, sessionDirs, signNodes } from './helper';

const sessionDir = sessionDirs();
let server: RunningPkiServer;
let blta: Buffer;

beforeAll(async () => {
  server = await startPkiServer();
  const { pki } = server;
  const signer = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  const stages = await signToLevel(await samplePdf(), signer, 'B-LTA', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [pki.root.certDer] });
  blta = await addValidationData(stages.blta!, { trustedRoots: [pki.root.certDer] });
});
afterAll(async () => { await server?.close(); });
afterEach(async () => { await helper.unload(); });

async function load(): Promise<void> {
  await helper.load([configNodes, signNodes, catchNode], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret', name: 'webhook secret' },
    {
      id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json',
      clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: server.pki.root.certPem, sessionDir: sessionDir(),
    },
    { id: 'f1', type: 'tab' },
    { id: 'verify', z: 'f1', type: 'singpass-pdf-verify', client: 'client', wires: [['out']] },
    { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'out', z: 'f1', type: 'helper' },
    { id: 'caught', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
}

test('a valid B-LTA: msg.verification has notes and no problems', async () => {
  await load();
  const out = nextMessage(getNode('out'));
  getNode('verify').receive({ payload: blta });
  const { verification } = await out;
  expect(verification).toMatchObject({ valid: true, level: 'B-LTA' });
  expect(verification.signatures[0]).toMatchObject({ problems: [], problemDetails: [] });
  expect(verification.signatures[0].notes.map((n: { code: string }) => n.code)).toEqual(['VALIDATION_DATA_ADDED', 'DOCUMENT_TIMESTAMP_ADDED']);
});

test('page content changed after signing: the Catch node gets SIGNATURE_INVALID saying so plainly', async () => {
  await load();
  const m = await caught('verify', { payload: changePageContent(blta) });
  expect(m.error.code).toBe('SIGNATURE_INVALID');
  expect(m.error.message).toContain('"Signature1": The document was changed after this signature was made: the content of a page was changed.');
  expect(m.verification.signatures[0].problems).toEqual(['NOT_COVERING_WHOLE_FILE']);
});
