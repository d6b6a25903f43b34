import { execFileSync } from 'node:child_process';
import type { INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { fixture } from '../../fixtures/pdfs';
import { addValidationData } from '../../../src/pades/ltv';
import { changePageContent, samplePdf, signToLevel } from '../../pades/ltv-helpers';
import { asN8nLoads, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The Singpass Sign operations the whole-session test does not reach on their own: Check Certificate Status (OCSP
 * against the sandbox CA), Expire Session, and the document operations given the wrong input. Each bad input is a
 * clear error with a stable code, and with Continue On Fail an error item paired with its input.
 */
describe('Singpass Sign node: single operations and bad input', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }], continueOnFail = false) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials, continueOnFail }));
  const checkStatus = (certificate: string) => run({ resource: 'certificate', operation: 'checkCertificateStatus', certificate });

  describe('Check Certificate Status', () => {
    it('a valid user certificate (PEM or base64 DER) is good, with its chain to the trusted root', async () => {
      const user = env.sb.pki.users.p256;
      const [[fromPem]] = await checkStatus(user.certPem);
      expect(fromPem.json).toMatchObject({ status: 'good', good: true });
      expect((fromPem.json.serialNumber as string).toLowerCase().replace(/^0+/, '')).toBe(user.serialHex.replace(/^0+/, ''));
      expect(fromPem.json.chain).toHaveLength(3); // user, intermediate, root
      const [[fromDer]] = await checkStatus(user.certDer.toString('base64'));
      expect(fromDer.json).toMatchObject({ status: 'good', subject: fromPem.json.subject });
    });

    it('a revoked certificate is reported revoked, with the revocation time', async () => {
      const [[out]] = await checkStatus(env.sb.pki.users.revoked.certPem);
      expect(out.json).toMatchObject({ status: 'revoked', good: false, code: 'OCSP_REVOKED', ocsp: { revokedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    });

    it('an empty field, garbage and a self-signed certificate are clear errors', async () => {
      await expect(checkStatus('  ')).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Certificate/) });
      for (const garbage of ['not a certificate', Buffer.from('hello').toString('base64'), '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----']) {
        await expect(checkStatus(garbage)).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/^Certificate: is not an X\.509 certificate/) });
      }
      const selfSigned = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=Not Singpass',
        '-days', '1', '-keyout', '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
      // the certificate step's verdict and code, as data (Node-RED's Check Certificate Status reports the same)
      const [[untrusted]] = await checkStatus(selfSigned);
      expect(untrusted.json).toMatchObject({ status: 'untrusted', good: false, code: 'CERTIFICATE_UNTRUSTED', message: expect.stringMatching(/Not Singpass.*not one of the trusted root/) });
    });
  });

  describe('Create Session', () => {
    it('outputs the QR code as PNG and SVG by default, and only its payload with QR Code Images off', async () => {
      const pdf = await fixture('classic');
      const [[withImages]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: {} }, [pdfItem(pdf)]);
      expect(withImages.json.qrSvg).toMatch(/^<svg/);
      expect(Object.keys(withImages.binary!).sort()).toEqual(['data', 'qr']);
      const [[without]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: { qrImages: false } }, [pdfItem(pdf)]);
      expect(without.json).toMatchObject({ status: 'waiting_for_scan', qrPayload: expect.any(String), signerLink: { query: expect.any(String) } });
      expect(without.json).not.toHaveProperty('qrSvg');
      expect(Object.keys(without.binary!)).toEqual(['data']);
    });

    it('App Link goes into the record (sent with the hash); one that is not an https link names the option', async () => {
      const pdf = await fixture('classic');
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: { qrImages: false, appLink: ' https://app.example.sg/signed ' } }, [pdfItem(pdf)]);
      expect((created.json.record as { request: { appLink?: string } }).request.appLink).toBe('https://app.example.sg/signed');
      await expect(run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: { appLink: 'myapp://signed' } }, [pdfItem(pdf)]))
        .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: 'App Link: must use https://' });
    });
  });

  describe('Create Session\'s Signature Level left at its default (not saved in the workflow): per node version', () => {
    const description = new SingpassSign().description;
    /** Create Session at `typeVersion` with `params`, as n8n runs it; the level its record asks for. */
    const levelAskedFor = async (typeVersion: number, params: Record<string, unknown>) => {
      const ctx = executeContext({ params, items: [pdfItem(await fixture('classic'))], credentials: env.credentials, typeVersion });
      const [[created]] = await new SingpassSign().execute.call(ctx);
      expect(created.json.status).toBe('waiting_for_scan');
      return (created.json.record as { request: { level: string } }).request.level;
    };
    const saved = { resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', options: { qrImages: false } };

    it.each([[3, 'B-LTA'], [2, 'B-T'], [1, 'B-T']])('version %i asks for %s', async (version, level) => {
      const loaded = asN8nLoads(description, version, saved);
      expect(loaded.level).toBe(level);
      expect(await levelAskedFor(version, loaded)).toBe(level);
      // the node's own fallback, for a parameter n8n did not fill in
      expect(await levelAskedFor(version, saved)).toBe(level);
    });

    it('Session Record ▸ Create Session has the same defaults; an explicit level is kept at every version', async () => {
      const stored = { resource: 'sessionRecord', operation: 'createStoredSession', binaryPropertyName: 'data' };
      expect([1, 2, 3].map((v) => asN8nLoads(description, v, stored).level)).toEqual(['B-T', 'B-T', 'B-LTA']);
      expect([1, 2, 3].map((v) => asN8nLoads(description, v, { ...stored, level: 'B-LT' }).level)).toEqual(['B-LT', 'B-LT', 'B-LT']);
      expect(await levelAskedFor(3, { ...saved, level: 'B-T' })).toBe('B-T');
    });
  });

  describe('Expire Session', () => {
    it('is a no-op before the deadline, and ends the session as expired after it', async () => {
      const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: {} }, [pdfItem(await fixture('classic'))]);
      const [[early]] = await run({ resource: 'session', operation: 'expireSession', record: created.json.record });
      expect(early.json).toMatchObject({ status: 'waiting_for_scan', deadline: expect.any(String) });
      expect(Date.parse(early.json.deadline as string)).toBeGreaterThan(Date.now());

      // the record as a store would return it after the service's expires_at has passed
      const record = JSON.parse(JSON.stringify(created.json.record)) as { state: { expiresAt: number } };
      record.state.expiresAt = Math.floor(Date.now() / 1000) - 1;
      const [[late]] = await run({ resource: 'session', operation: 'expireSession', record: JSON.stringify(record) });
      expect(late.json).toMatchObject({ status: 'expired', error: { code: 'SESSION_EXPIRED', message: expect.stringMatching(/start a new session/) } });
    });
  });

  describe('document operations given the wrong input', () => {
    it('Add Validation Data on a PDF that has no signature: a clear error, not a crash', async () => {
      const unsigned = await fixture('classic');
      await expect(run({ resource: 'document', operation: 'addValidationData', binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(unsigned)]))
        .rejects.toMatchObject({ context: { code: expect.any(String) }, message: expect.stringMatching(/signature/i) });
      const [[failed]] = await run({ resource: 'document', operation: 'addValidationData', binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(unsigned)], true);
      expect(failed).toMatchObject({ json: { code: expect.any(String), error: expect.any(String) }, pairedItem: { item: 0 } });
    });

    it('Verify Signed PDF reports an unsigned PDF as not valid, and fails on it when asked to', async () => {
      const unsigned = await fixture('classic');
      const [[report]] = await run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: false }, [pdfItem(unsigned)]);
      expect(report.json.verification).toMatchObject({ valid: false });
      await expect(run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: true }, [pdfItem(unsigned)]))
        .rejects.toMatchObject({ context: { code: expect.any(String) } });
    });

    it('Verify Signed PDF: a valid B-LTA has notes and no problems; content changed after signing is a problem in plain words', async () => {
      const { pki } = env.sb;
      const user = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
      const stages = await signToLevel(await samplePdf(), user, 'B-LTA', { tsaUrl: env.sb.urls.tsa, trustedRoots: [pki.root.certDer] });
      const blta = await addValidationData(stages.blta!, { trustedRoots: [pki.root.certDer] });
      const [[good]] = await run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: true }, [pdfItem(blta)]);
      const sig = (good.json.verification as { signatures: { problems: string[]; notes: { code: string; text: string }[] }[] }).signatures[0]!;
      expect(good.json.verification).toMatchObject({ valid: true, level: 'B-LTA' });
      expect(sig.problems).toEqual([]);
      expect(sig.notes.map((n) => n.code)).toEqual(['VALIDATION_DATA_ADDED', 'DOCUMENT_TIMESTAMP_ADDED']);

      const changed = changePageContent(blta);
      const [[bad]] = await run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: false }, [pdfItem(changed)]);
      expect(bad.json.verification).toMatchObject({ valid: false, signatures: [{ problems: ['NOT_COVERING_WHOLE_FILE'], problemDetails: [{ code: 'NOT_COVERING_WHOLE_FILE', text: expect.stringContaining('The document was changed after this signature was made') }] }, expect.anything()] });
      await expect(run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: true }, [pdfItem(changed)]))
        .rejects.toMatchObject({ context: { code: 'SIGNATURE_INVALID' }, message: expect.stringMatching(/^The PDF's signatures do not verify: "Signature1": The document was changed after this signature was made: the content of a page was changed\./) });
    });

    it('a missing binary property names the property and what the item has instead', async () => {
      for (const operation of ['addValidationData', 'addDocumentTimestamp', 'verifySignedPdf']) {
        await expect(run({ resource: 'document', operation, binaryPropertyName: 'pdf', outputBinaryPropertyName: 'data' }, [pdfItem(await fixture('classic'))]))
          .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/no binary property "pdf" \(it has: data\)/) });
      }
    });

    it('a file that is not a PDF is refused with a code, not a parser stack trace', async () => {
      await expect(run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: false }, [pdfItem(Buffer.from('hello, not a pdf'))]))
        .rejects.toMatchObject({ context: { code: expect.stringMatching(/^(INVALID_INPUT|PDF_\w+)$/) } });
    });
  });
});
