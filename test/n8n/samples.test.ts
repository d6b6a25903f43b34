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
      ['Save Record (error)', 'update'], ['Save Record (prepared)', 'update'], ['Save Record (resumed)', 'update'],
      ['Save Record (signed)', 'update'], ['Save Record (submitted)', 'update'], ['Save Record and PDF (created)', 'new'],
    ]);
    for (const n of saves.filter((x) => x.parameters.saveAs === 'update')) expect(n.parameters.expectedRevision).toMatch(/^=\{\{ \$\('(Load Record[^']*|List Due Sessions|Save Record \(prepared\))'\)\.item\.json\.revision \}\}$/);
    expect(wf.nodes.find((n) => n.name === 'Save Record and PDF (created)')!.parameters.pdfBinaryField).toBe('data');
    // the signature's save refused by a concurrent change of the unfinished record: load again and re-apply (bounded)
    expect(wf.connections['Save Record (signed)'].main).toEqual([[expect.objectContaining({ node: 'Changed Meanwhile? Load Again' })]]);
    expect(wf.connections['Changed Meanwhile? Load Again'].main[0]).toEqual([expect.objectContaining({ node: 'Load Record and PDF (signature)' })]);
    expect(JSON.stringify(wf.nodes.find((n) => n.name === 'Changed Meanwhile? Load Again')!.parameters)).toContain('$runIndex < 3');
    // nothing is submitted unless the save point was saved
    expect(JSON.stringify(wf.nodes.find((n) => n.name === 'Ready to Submit?')!.parameters)).toContain("$('Save Record (prepared)').item.json.saved");
  });

  it('document-signing.json resumes sessions left at the save point: a schedule → List Due Sessions → Expire Session → Submit Document Hash again → a compare-and-set save', () => {
    const wf = signing();
    const triggers = wf.nodes.filter((n) => n.type === 'n8n-nodes-base.scheduleTrigger');
    expect(triggers.map((t) => t.parameters)).toEqual([
      { rule: { interval: [{ field: 'seconds', secondsInterval: 30 }] } },
      { rule: { interval: [{ field: 'days', triggerAtHour: 3 }] } },
    ]);
    const resume = branch(wf, triggers[0].name);
    expect(resume.ops).toEqual(['scheduleTrigger:', 'singpassSign:listDue', 'singpassSign:expireSession', 'if:', 'singpassSign:saveRecord', 'singpassSign:submitDocumentHash']);
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    expect(byName.get(resume.names[1])!.parameters.idleSeconds).toBe(45);
    expect(byName.get(resume.names[4])!.parameters).toMatchObject({ saveAs: 'update', expectedRevision: "={{ $('List Due Sessions').item.json.revision }}" });
    // both Submits keep the save point when the service cannot take the hash just now (the engine's rule), for the schedule to resubmit
    const submits = wf.nodes.filter((n) => n.parameters.operation === 'submitDocumentHash');
    expect(submits).toHaveLength(2);
    for (const n of submits) expect(n.parameters).not.toHaveProperty('keepOnTemporaryFailure');
  });

  it('document-signing.json cleans up daily: ended sessions past a 7-day retention', () => {
    const wf = signing();
    const daily = wf.nodes.find((n) => n.type === 'n8n-nodes-base.scheduleTrigger' && JSON.stringify(n.parameters).includes('days'))!;
    const { ops, names } = branch(wf, daily.name);
    expect(ops).toEqual(['scheduleTrigger:', 'singpassSign:cleanUp']);
    expect(wf.nodes.find((n) => n.name === names[1])!.parameters.retentionDays).toBe(7);
  });
});
