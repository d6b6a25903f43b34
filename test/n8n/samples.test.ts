/**
 * The sample workflows as files (no n8n needed): they name node types as a real community-package install does, and
 * can all be published side by side (n8n refuses to activate a second workflow on a webhook path already taken) — but
 * for the queue-mode variant of the signing sample, which takes the one-instance sample's place.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import pkg from '../../package.json';
import { SIGNER_PAGE_HEADERS } from '../../src/session';

interface Workflow {
  id?: string;
  nodes: Array<{ name: string; type: string; typeVersion?: number; onError?: string; credentials?: Record<string, { id: string; name: string }>; parameters: { path?: string; httpMethod?: string; [k: string]: unknown } }>;
  connections: Record<string, { main: Array<Array<{ node: string }>> }>;
}
const DIR = path.join(__dirname, '../../flows/n8n');
const samples = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => ({ file: f, wf: JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as Workflow }));
const ourNodeTypes = pkg.n8n.nodes.map((p) => path.basename(p, '.node.js')).map((n) => `${pkg.name}.${n[0].toLowerCase()}${n.slice(1)}`);

describe('flows/n8n sample workflows', () => {
  it('are the ones docs/n8n.md and the README name, each in a line', () => {
    const files = samples.map((s) => s.file).sort();
    expect(files).toEqual(['company-signing.json', 'corppass-login.json', 'document-signing-queue-mode.json', 'document-signing.json', 'key-set-endpoint.json', 'singpass-login.json', 'two-signers.json']);
    const docs = fs.readFileSync(path.join(__dirname, '../../docs/n8n.md'), 'utf8');
    const readme = fs.readFileSync(path.join(__dirname, '../../README.md'), 'utf8');
    for (const f of files) {
      expect(docs).toMatch(new RegExp(`^- \`([\\w-]+\\.json\` / )?\`?${f.replace('.', '\\.')}\``, 'm'));
      expect(readme).toContain(f);
    }
  });

  it('two-signers.json starts only with the upload key, and the second signer only through their link, once the first signed', () => {
    const wf = samples.find((x) => x.file === 'two-signers.json')!.wf;
    const b = byName(wf);
    expect(b.get('Upload PDF')!.parameters.authentication).toBe('headerAuth');
    expect(JSON.parse(String((b.get('Create Session (First Signer)')!.parameters.options as { signer: string }).signer))).toMatchObject({ position: 1, of: 2 });
    expect(b.get('Create Session (First Signer)')!.parameters.level).toBe('B-T');
    // the session's record and PDF saved by Create Session itself, before the answer that holds the links
    expect(path1(wf, 'Upload PDF', 'Answer with Both Links').map((n) => op(wf, n))).toEqual(['webhook:', 'singpassSign:createStoredSession', 'respondToWebhook:']);
    expect(path1(wf, 'Next Signer Request', "Open Second Signer's Page").map((n) => op(wf, n))).toEqual(['webhook:', 'singpassSign:startNextSigner', 'if:', 'respondToWebhook:']);
    expect(b.get('Start Next Signer')!.parameters).toMatchObject({ previousSignRef: '={{ $json.query.ref }}', linkKey: '={{ $json.query.key }}', level: 'auto' });
    // no document is served here: the signed PDFs only through the signer's page (document-signing.json)
    expect(wf.nodes.filter((n) => n.parameters.respondWith === 'binary')).toEqual([]);
  });

  it('company-signing.json lets only a Corppass user holding a configured role start the signing for the company, and refuses others with a page', () => {
    const wf = samples.find((x) => x.file === 'company-signing.json')!.wf;
    const b = byName(wf);
    expect(path1(wf, 'Corppass Callback', 'Open Signer Page').map((n) => op(wf, n))).toEqual([
      'webhook:', 'corppass:completeLogin', 'if:', 'readWriteFile:read', 'singpassSign:createStoredSession', 'respondToWebhook:',
    ]);
    expect(path1(wf, 'Corppass Callback', 'Refuse: Role Required', { 'Role Held?': 1 }).map((n) => op(wf, n))).toEqual(['webhook:', 'corppass:completeLogin', 'if:', 'respondToWebhook:']);
    expect(b.get('Complete Login and Check Role')!.parameters).toMatchObject({ requireRole: true, roles: expect.stringMatching(/\S/), includeAccessToken: false });
    expect(JSON.stringify(b.get('Role Held?')!.parameters)).toContain('"leftValue":"={{ $json.officer.allowed }}"');
    expect(b.get('Create Session for the Company')!.parameters.options).toMatchObject({ onBehalfOf: "={{ $('Complete Login and Check Role').item.json.onBehalfOf }}" });
    expect(b.get('Refuse: Role Required')!.parameters).toMatchObject({ responseBody: '={{ $json.refusalPage }}', options: { responseCode: 403 } });
    // the login is started by a POST (a user action), never a bare link
    expect(b.get('Sign for the Company')!.parameters.httpMethod).toBe('POST');
  });

  it('document-signing-queue-mode.json is byte for byte what scripts/make-n8n-queue-sample.js makes of document-signing.json', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-queue-sample-'));
    try {
      const out = path.join(dir, 'q.json');
      await promisify(execFile)(process.execPath, [path.join(__dirname, '../../scripts/make-n8n-queue-sample.js'), '--out', out]);
      const committed = fs.readFileSync(path.join(DIR, 'document-signing-queue-mode.json'), 'utf8');
      if (fs.readFileSync(out, 'utf8') !== committed) throw new Error('flows/n8n/document-signing-queue-mode.json is stale: run node scripts/make-n8n-queue-sample.js');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('document-signing-queue-mode.json keeps nothing on one process\'s disk: records and kept events in PostgreSQL, the signed PDF over SFTP', () => {
    const wf = samples.find((x) => x.file === 'document-signing-queue-mode.json')!.wf;
    const ours = wf.nodes.filter((n) => ourNodeTypes.includes(n.type));
    // every store node on the one Singpass Session Store credential (Kind PostgreSQL in queue mode), no folder of its own
    const storeNodes = ours.filter((x) => x.parameters.resource === 'sessionRecord' || x.type.endsWith('singpassSignTrigger'));
    expect(storeNodes.length).toBeGreaterThanOrEqual(7);
    for (const n of storeNodes) {
      expect([n.name, n.typeVersion, n.parameters.store, n.parameters.folder, n.parameters.recordFolder]).toEqual([n.name, 3, undefined, undefined, undefined]);
      expect([n.name, n.credentials?.singpassSessionStoreApi?.id]).toEqual([n.name, 'spflStore0000001']);
    }
    expect(wf.nodes.filter((n) => n.type === 'n8n-nodes-base.readWriteFile')).toEqual([]);
    const upload = wf.nodes.find((n) => n.type === 'n8n-nodes-base.ftp')!;
    expect(upload.parameters).toMatchObject({ protocol: 'sftp', operation: 'upload', path: '=/signed/{{ $json.signRef }}-signed.pdf', binaryPropertyName: 'data' });
    expect(upload.onError).toBe('continueErrorOutput');
    expect(wf.connections.Outcome.main[0].map((c) => c.node)).toEqual([upload.name]);
    // stored, then acknowledged (the FTP node's item is its own: the session is Run Due Step's); failed: reported
    expect(wf.connections[upload.name].main.map((out) => out.map((c) => c.node))).toEqual([['Acknowledge Stored PDF'], ['Report Storage Failure']]);
    expect(byName(wf).get('Acknowledge Stored PDF')!.parameters.signRef).toBe("={{ $('Run Due Step').item.json.signRef }}");
  });

  it.each(samples.filter((s) => s.wf.nodes.some((n) => /\.singpassSign(Trigger)?$/.test(n.type))))('$file: its Singpass Sign and Sign Trigger nodes are version 3 (the defaults new nodes get) and rely on no default version 3 changed', ({ wf }) => {
    const nodes = wf.nodes.filter((n) => /\.singpassSign(Trigger)?$/.test(n.type));
    expect(nodes.map((n) => [n.name, n.typeVersion])).toEqual(nodes.map((n) => [n.name, 3]));
    // Create Session asks for its level itself (version 2's default was B-T, version 3's B-LTA)
    for (const n of nodes.filter((x) => ['createSession', 'createStoredSession'].includes(String(x.parameters.operation)))) expect([n.name, n.parameters.level]).toEqual([n.name, expect.stringMatching(/^B-(B|T|LT|LTA)$/)]);
    // the trigger binds to the session store: Certificate in Output (version 2 Include, version 3 Leave Out) is not shown
    for (const n of nodes.filter((x) => x.type.endsWith('.singpassSignTrigger'))) expect([n.name, n.parameters.sessionRecords ?? 'store', n.parameters.certificateInOutput]).toEqual([n.name, 'store', undefined]);
  });

  it.each(samples)('$file has an id (n8n import:workflow needs one) and only node types a real install has', ({ wf }) => {
    expect(wf.id).toMatch(/^[A-Za-z0-9]{16}$/);
    for (const node of wf.nodes) {
      expect(node.type.startsWith('n8n-nodes-base.') || ourNodeTypes.includes(node.type)).toBe(true);
    }
    expect(wf.nodes.some((n) => ourNodeTypes.includes(n.type))).toBe(true);
  });

  it('never register the same webhook path twice, so all can be active at once (the queue-mode variant instead of the signing sample)', () => {
    const paths = samples.filter((s) => s.file !== 'document-signing-queue-mode.json').flatMap(({ wf }) => wf.nodes.filter((n) => typeof n.parameters.path === 'string').map((n) => n.parameters.path!));
    expect(paths.length).toBeGreaterThanOrEqual(9);
    expect(new Set(paths).size).toBe(paths.length);
  });

  /** The nodes a trigger runs, breadth first, as `<type>:<operation>`. */
  function branch(wf: Workflow, triggerName: string): { names: string[]; ops: string[] } {
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    const names: string[] = [];
    for (const seen = new Set<string>(), queue = [triggerName]; queue.length;) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      names.push(name);
      queue.push(...(wf.connections[name]?.main ?? []).flat().map((c) => c.node));
    }
    return { names, ops: names.map((n) => byName.get(n)!).map((n) => `${n.type.split('.').pop()}:${String(n.parameters.operation ?? '')}`) };
  }
  const signing = () => samples.find((x) => x.file === 'document-signing.json')!.wf;

  /** The nodes of the only path from `from` to `to` along first outputs (throws when it forks or stops). */
  function path1(wf: Workflow, from: string, to: string, output: Record<string, number> = {}): string[] {
    const names = [from];
    for (let at = from; at !== to;) {
      const next = wf.connections[at]?.main[output[at] ?? 0] ?? [];
      if (next.length !== 1) throw new Error(`${at} has ${next.length} successors on output ${output[at] ?? 0}`);
      at = next[0].node;
      if (names.includes(at)) throw new Error(`loop at ${at}`);
      names.push(at);
    }
    return names;
  }

  const byName = (wf: Workflow) => new Map(wf.nodes.map((n) => [n.name, n]));
  const op = (wf: Workflow, name: string) => {
    const n = byName(wf).get(name)!;
    return `${n.type.split('.').pop()}:${String(n.parameters.operation ?? '')}`;
  };

  it('document-signing.json is small and shows the chain a builder expects: upload → session; certificate → OCSP → Prepare → Submit; signature → finished and handed over → storage → acknowledged', () => {
    const wf = signing();
    expect(wf.nodes.length).toBeLessThanOrEqual(18);
    expect(path1(wf, 'Upload PDF', 'Answer with Signer Page Link').map((n) => op(wf, n))).toEqual(['webhook:', 'singpassSign:createStoredSession', 'respondToWebhook:']);
    const live = path1(wf, 'Singpass Sign Trigger', 'Submit Document Hash');
    expect(live.map((n) => op(wf, n))).toEqual([
      'singpassSignTrigger:', 'singpassSign:checkCertificateStatus', 'singpassSign:prepareStoredSignature', 'singpassSign:submitStoredHash',
    ]);
    // the signature (and error) output: the driver saves the signature, then finishes it to the level asked for and
    // hands the PDF over; the storage writes it, then acknowledges; its error output reports the failure
    const [, signature, error] = wf.connections['Singpass Sign Trigger'].main.map((out) => out.map((c) => c.node));
    expect([signature, error]).toEqual([['Run Due Step'], ['Run Due Step']]);
    const finishing = path1(wf, 'Run Due Step', 'Acknowledge Stored PDF');
    expect(finishing.map((n) => op(wf, n))).toEqual(['singpassSign:runDueStep', 'switch:', 'readWriteFile:write', 'singpassSign:acknowledgeStoredPdf']);
    expect(path1(wf, 'Store Signed PDF', 'Report Storage Failure', { 'Store Signed PDF': 1 }).map((n) => op(wf, n))).toEqual(['readWriteFile:write', 'singpassSign:reportStorageFailure']);
    const b = byName(wf);
    expect(b.get('Store Signed PDF')!.onError).toBe('continueErrorOutput');
    expect(b.get('Create Session')!.parameters.level).toBe('B-LTA'); // finished inside the engine: no document steps after it
    expect(wf.nodes.filter((n) => n.parameters.resource === 'document')).toEqual([]);
    // the hand-over's lease and window, where a deployment changes them
    expect(b.get('Run Due Step')!.parameters).toMatchObject({ handOverLeaseSeconds: 300, handOverWindowSeconds: 86400 });
    // Check Certificate Status informs; Prepare decides (an OCSP hiccup at the first check holds nothing up)
    expect(b.get('Check Certificate Status')).toMatchObject({ onError: 'continueRegularOutput', parameters: { certificateFrom: 'delivery' } });
  });

  it('document-signing.json takes the session from the items, not from expressions: none but the Outcome rules, the file name and the upload\'s answer', () => {
    const wf = signing();
    const expressions = (name: string) => (JSON.stringify(byName(wf).get(name)!.parameters).match(/\{\{/g) ?? []).length;
    const perSession = [...branch(wf, 'Upload PDF').names, ...branch(wf, 'Singpass Sign Trigger').names, ...branch(wf, 'Every 30 s: Resume Stuck Sessions').names];
    expect(Object.fromEntries(perSession.filter((n) => expressions(n) > 0).map((n) => [n, expressions(n)]))).toEqual({ Outcome: 2, 'Store Signed PDF': 1, 'Answer with Signer Page Link': 4 });
    // the answer reads Create Session's output as its own input, not through a node lookup
    expect(JSON.stringify(byName(wf).get('Answer with Signer Page Link')!.parameters)).not.toContain("$('");
  });

  it('document-signing.json routes on the outcome only: the signed PDF handed over, or a session the run ended without it (failed, expired, undelivered)', () => {
    const wf = signing();
    const outcome = byName(wf).get('Outcome')!;
    const rules = (outcome.parameters.rules as { values: Array<{ outputKey: string; conditions: { conditions: Array<{ leftValue: string; rightValue: string; operator: { operation: string } }> } }> }).values;
    expect(rules.map((r) => [r.outputKey, r.conditions.conditions.map((c) => [c.leftValue, c.operator.operation, c.rightValue])])).toEqual([
      ['Signed PDF', [['={{ $json.handOver === true }}', 'true', '']]],
      ['Ended Without It', [['={{ $json.ended === true }}', 'true', '']]],
    ]);
    expect(wf.connections.Outcome.main.map((out) => out.map((c) => c.node))).toEqual([['Store Signed PDF'], ['Session Failed or Expired']]);
    // nothing routes on List Due's action any more: the driver knows what each session needs
    expect(JSON.stringify(wf.nodes)).not.toContain('$json.action');
    expect(wf.nodes.filter((n) => ['expireSession', 'applyEvent', 'finalizeSignature', 'preparePdfSignature', 'submitDocumentHash'].includes(String(n.parameters.operation)))).toEqual([]);
  });

  it('document-signing.json keeps session records with the Session Record operations only (each saving its own step, with compare-and-set after the first), and writes only the signed PDF as a file', () => {
    const wf = signing();
    const b = byName(wf);
    const files = wf.nodes.filter((n) => /readWriteFile|convertToFile|extractFromFile/.test(n.type));
    expect(files.map((n) => [n.name, n.parameters.operation, n.parameters.fileName])).toEqual([
      // the flow's storage: a folder of its own beside the session store's
      ['Store Signed PDF', 'write', '=/home/node/.n8n-files/singpass-signed/{{ $json.signRef }}-signed.pdf'],
    ]);
    // Create Session saves the new record and its PDF itself; every later step loads and saves with compare-and-set
    expect(b.get('Create Session')!.parameters).toMatchObject({ resource: 'sessionRecord', operation: 'createStoredSession', binaryPropertyName: 'data' });
    expect(wf.nodes.filter((n) => ['saveRecord', 'loadRecord'].includes(String(n.parameters.operation)) || n.type.endsWith('.if'))).toEqual([]);
    // Run Due Step takes the session (and an event) from the trigger's item or List Due's
    expect(b.get('Run Due Step')!.parameters).toMatchObject({ sessionFrom: 'item', outputBinaryPropertyName: 'data' });
  });

  it('document-signing.json chooses the session store once: every Session Record node and the trigger are version 3 with the same Singpass Session Store credential, and no node names a store of its own', () => {
    const wf = signing();
    const records = wf.nodes.filter((n) => n.parameters.resource === 'sessionRecord');
    expect(records.length).toBeGreaterThanOrEqual(6);
    // Check Certificate Status loads the trigger's certificate from the store (the item carries none)
    records.push(wf.nodes.find((n) => n.name === 'Check Certificate Status')!);
    const trigger = wf.nodes.find((n) => n.type.endsWith('.singpassSignTrigger'))!;
    const stores = [...records, trigger];
    for (const n of stores) {
      expect({ name: n.name, typeVersion: n.typeVersion, store: n.credentials?.singpassSessionStoreApi }).toEqual({ name: n.name, typeVersion: 3, store: { id: 'spflStore0000001', name: 'Singpass session store' } });
      for (const p of ['store', 'folder', 'idleSeconds', 'recordStore', 'recordFolder', 'sessionRecords']) expect(n.parameters[p]).toBeUndefined();
    }
    // no other node carries a store credential of any kind
    expect(wf.nodes.filter((n) => !stores.includes(n) && Object.keys(n.credentials ?? {}).some((c) => c.startsWith('singpassSessionStore')))).toEqual([]);
  });

  it('document-signing.json is safe by default: only a caller with the upload key starts a session, and only a valid signer link opens the page or the signed PDF', () => {
    const wf = signing();
    const webhooks = wf.nodes.filter((n) => n.type === 'n8n-nodes-base.webhook');
    expect(webhooks.map((n) => [n.name, n.parameters.authentication, Object.keys((n as { credentials?: object }).credentials ?? {})])).toEqual([
      ['Upload PDF', 'headerAuth', ['httpHeaderAuth']],
      // its caller has no n8n credential: the link's key is checked by Signer Page before anything is read
      ['Signer Page Request', undefined, []],
    ]);
    // three nodes: every answer (page, status, refusal, the signed PDF on its own short-lived link) from Signer Page
    expect(path1(wf, 'Signer Page Request', 'Answer Signer Page').map((n) => op(wf, n))).toEqual(['webhook:', 'singpassSign:signerPage', 'respondToWebhook:']);
    expect(wf.connections['Answer Signer Page']).toBeUndefined();
    const binary = wf.nodes.filter((x) => x.type === 'n8n-nodes-base.respondToWebhook' && x.parameters.respondWith === 'binary').map((n) => n.name);
    expect(binary).toEqual(['Answer Signer Page']);
    const signerPage = byName(wf).get('Signer Page')!.parameters;
    const respond = byName(wf).get('Answer Signer Page')!.parameters as { inputFieldName: string; options: { responseCode: string; responseHeaders: { entries: Array<{ name: string; value: string }> } } };
    expect([respond.inputFieldName, respond.options.responseCode]).toEqual([signerPage.outputBinaryPropertyName, '={{ $json.statusCode }}']);
    // the headers are the core's (SIGNER_PAGE_HEADERS) and Content-Disposition, each passed on from Signer Page's
    // output, none written here: the content type is the binary's own
    const names = [...Object.keys(SIGNER_PAGE_HEADERS), 'content-disposition'];
    expect([...respond.options.responseHeaders.entries].sort((a, b) => a.name.localeCompare(b.name))).toEqual(names.sort().map((name) => ({ name, value: `={{ $json.headers['${name}'] }}` })));
    // the upload answers with the page link (303), not a page holding the QR code under a bare sign_ref
    const answer = byName(wf).get('Answer with Signer Page Link')!.parameters as { options: { responseCode: number; responseHeaders: { entries: Array<{ name: string; value: string }> } } };
    expect(answer.options.responseCode).toBe(303);
    expect(answer.options.responseHeaders.entries).toContainEqual({ name: 'location', value: '=page?{{ $json.signerLink.query }}' });
    // the trigger verifies the service's signature and binds the Bearer to its stored session before anything runs
    expect(wf.nodes.filter((n) => n.type.endsWith('.singpassSignTrigger')).map((n) => n.parameters.path)).toEqual(['singpass-sign/webhook']);
  });

  it('document-signing.json resumes sessions with one driver: a schedule every 30 s → List Due Sessions → Run Due Step, the same node the trigger\'s signature and error events go to', () => {
    const wf = signing();
    const triggers = wf.nodes.filter((n) => n.type === 'n8n-nodes-base.scheduleTrigger');
    expect(triggers.map((t) => t.parameters)).toEqual([{ rule: { interval: [{ field: 'seconds', secondsInterval: 30 }] } }]);
    const resume = path1(wf, triggers[0].name, 'Run Due Step');
    expect(resume.map((n) => op(wf, n))).toEqual(['scheduleTrigger:', 'singpassSign:listDue', 'singpassSign:runDueStep']);
  });

  it('document-signing.json cleans up on the same schedule: List Due Sessions deletes ended sessions past the store credential\'s retention, no schedule or retention of its own', () => {
    const wf = signing();
    const list = wf.nodes.filter((n) => n.parameters.operation === 'listDue');
    expect(list.map((n) => n.parameters)).toEqual([{ resource: 'sessionRecord', operation: 'listDue', deleteEnded: true }]);
    expect(wf.nodes.filter((n) => n.parameters.operation === 'cleanUp' || 'retentionDays' in n.parameters)).toEqual([]);
    expect(branch(wf, 'Every 30 s: Resume Stuck Sessions').ops).toEqual(['scheduleTrigger:', 'singpassSign:listDue', 'singpassSign:runDueStep', 'switch:',
      'readWriteFile:write', 'noOp:', 'singpassSign:acknowledgeStoredPdf', 'singpassSign:reportStorageFailure']);
  });
});
