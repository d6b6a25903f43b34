/**
 * The sample workflows as files (no n8n needed): they name node types as a real community-package install does, and
 * can all be published side by side (n8n refuses to activate a second workflow on a webhook path already taken).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import pkg from '../../package.json';

interface Workflow {
  id?: string;
  nodes: Array<{ name: string; type: string; parameters: { path?: string; httpMethod?: string; [k: string]: unknown } }>;
  connections: Record<string, { main: Array<Array<{ node: string }>> }>;
}
const DIR = path.join(__dirname, '../../flows/n8n');
const samples = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => ({ file: f, wf: JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as Workflow }));
const ourNodeTypes = pkg.n8n.nodes.map((p) => path.basename(p, '.node.js')).map((n) => `${pkg.name}.${n[0].toLowerCase()}${n.slice(1)}`);

describe('flows/n8n sample workflows', () => {
  it('are the four docs/n8n.md lists', () => {
    expect(samples.map((s) => s.file).sort()).toEqual(['corppass-login.json', 'document-signing.json', 'key-set-endpoint.json', 'singpass-login.json']);
  });

  it.each(samples)('$file has an id (n8n import:workflow needs one) and only node types a real install has', ({ wf }) => {
    expect(wf.id).toMatch(/^[A-Za-z0-9]{16}$/);
    for (const node of wf.nodes) {
      expect(node.type.startsWith('n8n-nodes-base.') || ourNodeTypes.includes(node.type)).toBe(true);
    }
    expect(wf.nodes.some((n) => ourNodeTypes.includes(n.type))).toBe(true);
  });

  it('never register the same webhook path twice, so all can be active at once', () => {
    const paths = samples.flatMap(({ wf }) => wf.nodes.filter((n) => typeof n.parameters.path === 'string').map((n) => n.parameters.path!));
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

  it('document-signing.json keeps session records with the Session Record operations only: no Read/Write Files, Convert to File or Extract from File for records or the PDF being signed', () => {
    const wf = signing();
    const files = wf.nodes.filter((n) => /readWriteFile|convertToFile|extractFromFile/.test(n.type));
    // only the signed PDF, the workflow's output, is written with Read/Write Files
    expect(files.map((n) => [n.name, n.parameters.operation, n.parameters.fileName])).toEqual([
      ['Store Signed PDF', 'write', "=/home/node/.n8n-files/singpass/{{ $('Finalize Signature').item.json.signRef }}-signed.pdf"],
    ]);
    const records = wf.nodes.filter((n) => n.parameters.resource === 'sessionRecord');
    for (const n of records) expect(n.parameters.folder).toBe('/home/node/.n8n-files/singpass');
    // every save after a load is a compare-and-set against the revision that load read
    const saves = records.filter((n) => n.parameters.operation === 'saveRecord');
    expect(saves.map((n) => [n.name, n.parameters.saveAs]).sort()).toEqual([
      ['Save Record (error)', 'update'], ['Save Record (finished)', 'update'], ['Save Record (prepared)', 'update'], ['Save Record (resumed)', 'update'],
      ['Save Record (signature)', 'update'], ['Save Record (submitted)', 'update'], ['Save Record and PDF (created)', 'new'],
    ]);
    for (const n of saves.filter((x) => x.parameters.saveAs === 'update')) expect(n.parameters.expectedRevision).toMatch(/^=\{\{ \$\('(Load Record[^']*|List Due Sessions|Save Record \(prepared\))'\)\.item\.json\.revision \}\}$/);
    expect(wf.nodes.find((n) => n.name === 'Save Record and PDF (created)')!.parameters.pdfBinaryField).toBe('data');
    // the signature's save refused by a concurrent change of the unfinished record: load again and re-apply (bounded)
    expect(wf.connections['Signature Saved?'].main[1]).toEqual([expect.objectContaining({ node: 'Changed Meanwhile? Load Again' })]);
    expect(wf.connections['Changed Meanwhile? Load Again'].main[0]).toEqual([expect.objectContaining({ node: 'Load Record (signature)' })]);
    expect(JSON.stringify(wf.nodes.find((n) => n.name === 'Changed Meanwhile? Load Again')!.parameters)).toContain('$runIndex < 3');
    // nothing is submitted unless the save point was saved
    expect(JSON.stringify(wf.nodes.find((n) => n.name === 'Ready to Submit?')!.parameters)).toContain("$('Save Record (prepared)').item.json.saved");
  });

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

  it('document-signing.json saves the signature before finishing (the second save point), finishes with Finalize Signature alone (engine.finish reaches B-LTA), and stores the signed PDF before the record is saved completed', () => {
    const wf = signing();
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    expect(byName.get('Create Session')!.parameters.level).toBe('B-LTA');
    const live = path1(wf, 'Load Record (signature)', 'Save Record (finished)', { 'Signed PDF?': 0 });
    expect(live.map((n) => `${byName.get(n)!.type.split('.').pop()}:${String(byName.get(n)!.parameters.operation ?? '')}`)).toEqual([
      'singpassSign:loadRecord', 'singpassSign:applyEvent', 'if:', 'singpassSign:saveRecord', 'if:', 'singpassSign:loadRecord', 'singpassSign:finalizeSignature', 'if:',
      'readWriteFile:write', 'singpassSign:saveRecord',
    ]);
    expect(byName.get(live[3])!.parameters.record).toBe("={{ $('Apply Signature').item.json.record }}");
    expect(JSON.stringify(byName.get('Signature Saved?')!.parameters)).toContain('$json.saved');
    // Finalize runs on the record as stored with the signature, and its outcome is saved whatever it is: completed
    // after the signed PDF is stored; still signed with lastFinishFailure (TSA/OCSP down); failed with the reason
    expect(byName.get('Load Record and PDF (to finish)')!.parameters).toMatchObject({ pdfBinaryField: 'data', ifMissing: 'error' });
    expect(byName.get('Finalize Signature')!.parameters.record).toBe('={{ $json.record }}');
    expect(wf.connections['Signed PDF?'].main[1]).toEqual([expect.objectContaining({ node: 'Save Record (finished)' })]);
    expect(JSON.stringify(byName.get('Signed PDF?')!.parameters)).toMatch(/"leftValue":"=\{\{ \$json\.status \}\}","rightValue":"completed"/);
    expect(byName.get('Save Record (finished)')!.parameters.record).toBe("={{ $('Finalize Signature').item.json.record }}");
    // one rule for the level: no separate validation-data, document-timestamp or verify steps to fail outside it
    expect(wf.nodes.filter((n) => n.parameters.resource === 'document')).toEqual([]);
  });

  it('document-signing.json saves, submits and finishes nothing for an event another execution applied first (a redelivery): the certificate and signature branches stop on duplicate', () => {
    const wf = signing();
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    for (const [applied, gate, save] of [['Prepare PDF Signature', 'New Certificate?', 'Save Record (prepared)'], ['Apply Signature', 'New Signature?', 'Save Record (signature)']]) {
      expect(wf.connections[applied].main).toEqual([[expect.objectContaining({ node: gate })]]);
      expect(wf.connections[gate].main).toEqual([[expect.objectContaining({ node: save })], []]);
      const conditions = (byName.get(gate)!.parameters.conditions as { conditions: unknown[] }).conditions;
      expect(conditions).toEqual([expect.objectContaining({ leftValue: '={{ $json.duplicate }}', operator: expect.objectContaining({ type: 'boolean', operation: 'false' }) })]);
    }
  });

  it('document-signing.json reads each event\'s delivery from a node the trigger and the resume schedule\'s replay both feed (Certificate / Signature / Error Event), never from the trigger itself', () => {
    const wf = signing();
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    const events = ['Certificate Event', 'Signature Event', 'Error Event'];
    expect(wf.connections['Singpass Sign Trigger'].main.map((out) => out.map((c) => c.node))).toEqual(events.map((e) => [e]));
    for (const e of events) expect(byName.get(e)!.type).toBe('n8n-nodes-base.noOp');
    expect(wf.nodes.filter((n) => n.parameters.delivery !== undefined).map((n) => [n.name, n.parameters.delivery])).toEqual([
      ['Prepare PDF Signature', "={{ $('Certificate Event').item.json.delivery }}"],
      ['Apply Signature', "={{ $('Signature Event').item.json.delivery }}"],
      ['Record the Failure', "={{ $('Error Event').item.json.delivery }}"],
    ]);
    expect(JSON.stringify(wf.nodes)).not.toContain("$('Singpass Sign Trigger')");
  });

  it('document-signing.json binds each notification to its session at the trigger (Session Record Folder = the records\' folder)', () => {
    const trigger = signing().nodes.find((n) => n.type.endsWith('.singpassSignTrigger'))!;
    expect(trigger.parameters.recordFolder).toBe('/home/node/.n8n-files/singpass');
  });

  it('document-signing.json resumes sessions by their next step: a schedule → List Due Sessions → by action: resubmit the hash (After an Interruption), finish the signature, or expire → compare-and-set saves', () => {
    const wf = signing();
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    const triggers = wf.nodes.filter((n) => n.type === 'n8n-nodes-base.scheduleTrigger');
    expect(triggers.map((t) => t.parameters)).toEqual([
      { rule: { interval: [{ field: 'seconds', secondsInterval: 30 }] } },
      { rule: { interval: [{ field: 'days', triggerAtHour: 3 }] } },
    ]);
    const [, list, route] = path1(wf, triggers[0].name, 'Route by Action');
    expect(byName.get(list)!.parameters).toMatchObject({ operation: 'listDue', idleSeconds: 45 });
    const r = byName.get(route)!;
    expect(r.type).toBe('n8n-nodes-base.switch');
    const rules = (r.parameters.rules as { values: Array<{ conditions: { conditions: Array<{ leftValue: string; rightValue: string }> } }> }).values
      .map((v) => v.conditions.conditions.map((c) => [c.leftValue, c.rightValue]));
    expect(rules).toEqual([[['={{ $json.action }}', 'submitHash']], [['={{ $json.action }}', 'finish']],
      [['={{ $json.action }}', 'replayCertificate']], [['={{ $json.action }}', 'replaySignature']], [['={{ $json.action }}', 'replayError']]]);
    expect(r.parameters.options).toMatchObject({ fallbackOutput: 'extra' }); // expire, continueCertificate
    const [toSubmit, toFinish, replayCertificate, replaySignature, replayError, otherwise] = wf.connections[route].main.map((out) => out.map((c) => c.node));
    // a kept event no run applied goes where the trigger's output of its type goes
    expect([replayCertificate, replaySignature, replayError]).toEqual(wf.connections['Singpass Sign Trigger'].main.map((out) => out.map((c) => c.node)));
    expect(toFinish).toEqual(['Load Record and PDF (to finish)']); // the same finishing chain as the live signature
    expect(path1(wf, toSubmit[0], 'Save Record (resumed)').map((n) => byName.get(n)!.parameters.operation)).toEqual(['submitDocumentHash', 'saveRecord']);
    expect(path1(wf, otherwise[0], 'Save Record (resumed)').map((n) => byName.get(n)!.parameters.operation ?? byName.get(n)!.type)).toEqual(['expireSession', 'n8n-nodes-base.if', 'saveRecord']);
    expect(byName.get('Save Record (resumed)')!.parameters).toMatchObject({ saveAs: 'update', expectedRevision: "={{ $('List Due Sessions').item.json.revision }}" });
    // the live Submit makes the first call (a refusal is the service's verdict); the schedule's may be a resend
    const submits = wf.nodes.filter((n) => n.parameters.operation === 'submitDocumentHash');
    expect(submits.map((n) => [n.name, n.parameters.afterInterruption ?? false])).toEqual([['Submit Document Hash', false], [toSubmit[0], true]]);
  });

  it('document-signing.json cleans up daily: ended sessions past a 7-day retention', () => {
    const wf = signing();
    const daily = wf.nodes.find((n) => n.type === 'n8n-nodes-base.scheduleTrigger' && JSON.stringify(n.parameters).includes('days'))!;
    const { ops, names } = branch(wf, daily.name);
    expect(ops).toEqual(['scheduleTrigger:', 'singpassSign:cleanUp']);
    expect(wf.nodes.find((n) => n.name === names[1])!.parameters.retentionDays).toBe(7);
  });
});
