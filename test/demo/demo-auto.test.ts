/**
 * `npm run demo -- --auto` (the built CLI): one sample signed unattended through the Node-RED signing example and
 * the sandbox; the PDF it names is checked by pdfsig, qpdf and `singpass-flows verify --root` (this run's sandbox root). Also: a second run
 * right after the first works and leaves no Node-RED user folder behind, and a busy port is refused by name.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { leftoverUserDirs, pdfsigTrusting, requireBuild, runCli } from './helpers';

const run = promisify(execFile);
const work = mkdtempSync(path.join(tmpdir(), 'demo-auto-'));
beforeAll(requireBuild);
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function autoRun(signedDir: string, tmp: string) {
  const r = await runCli(['demo', '--auto', '--sandbox-port', '0', '--node-red-port', '0', '--signed-dir', signedDir], { tmp });
  if (r.code !== 0) throw new Error(`demo --auto exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  const file = /^Signed PDF: (.+)$/m.exec(r.stdout)?.[1];
  if (!file) throw new Error(`no "Signed PDF:" line in:\n${r.stdout}`);
  return { ...r, file };
}

test('demo --auto signs a sample at B-LTA; pdfsig calls it valid, verify --root trusts it; a second run works and nothing is left behind', async () => {
  const signedDir = path.join(work, 'signed');
  const tmp = mkdtempSync(path.join(work, 'tmp-'));
  const first = await autoRun(signedDir, tmp);
  expect(first.stdout).toContain('Result: VALID (B-LTA)');
  expect(first.stdout).toMatch(/Signer: .*TAN AH KOW/);
  expect(first.stdout).toMatch(/^OK: tenancy-agreement\.pdf signed at PAdES B-LTA/m);
  // a valid B-LTA has no problems; what was appended after the signature is said in the notes
  expect(first.stdout).not.toContain('Problems');
  expect(first.stdout).toContain('Notes: VALIDATION_DATA_ADDED, DOCUMENT_TIMESTAMP_ADDED');
  expect(path.dirname(first.file)).toBe(signedDir);

  const root = readFileSync(path.join(signedDir, 'sandbox-root-ca.pem'), 'utf8');
  const report = await pdfsigTrusting(first.file, root);
  const ours = report.split(/^Signature #2:$/m)[0]!;
  expect(ours).toContain('Signature Validation: Signature is Valid.');
  // (NSS would fetch the intermediate CA from the sandbox, which stopped with the demo: the chain is checked below)
  expect(report).toContain('Field Name: DocTimeStamp1');
  expect((await run('qpdf', ['--check', first.file])).stdout).toContain('No syntax or stream encoding errors found');
  // the hint the demo prints: verify again later against this run's root (chain, OCSP in the DSS, level)
  const verify = await runCli(['verify', first.file, '--root', path.join(signedDir, 'sandbox-root-ca.pem')]);
  expect(verify.code).toBe(0);
  expect(verify.stdout).toContain('Result: VALID (B-LTA)');
  expect(leftoverUserDirs(tmp)).toEqual([]);

  // The fixed parts of the first run are gone: the same command again works (fresh sandbox CA, fresh Node-RED).
  const second = await autoRun(signedDir, tmp);
  expect(second.file).not.toBe(first.file);
  expect(second.stdout).toContain('Result: VALID (B-LTA)');
  expect(leftoverUserDirs(tmp)).toEqual([]);
  // results.jsonl, written by the example flow's "record result" node, has both sessions
  const results = readFileSync(path.join(signedDir, 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { file: string; valid: boolean; level: string });
  expect(results.filter((r) => [first.file, second.file].includes(r.file)).map((r) => [r.valid, r.level])).toEqual([[true, 'B-LTA'], [true, 'B-LTA']]);
});

test('a busy port is refused before anything starts, naming the option to change it', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    const sb = await runCli(['demo', '--sandbox-port', String(port), '--node-red-port', '0', '--signed-dir', path.join(work, 'busy')]);
    expect(sb.code).toBe(1);
    expect(sb.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(sb.stderr).toContain('--sandbox-port');
    const nr = await runCli(['demo', '--auto', '--sandbox-port', '0', '--node-red-port', String(port), '--signed-dir', path.join(work, 'busy')]);
    expect(nr.code).toBe(1);
    expect(nr.stderr).toContain('--node-red-port');
  } finally {
    blocker.close();
  }
});
