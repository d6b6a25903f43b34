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
  it('are the four the README lists', () => {
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

  it('document-signing.json resumes sessions left at the save point: a schedule → the stored records → at the save point past a grace period → Expire Session → Submit Document Hash again → stored', () => {
    const { wf } = samples.find((x) => x.file === 'document-signing.json')!;
    const byName = new Map(wf.nodes.map((n) => [n.name, n]));
    const trigger = wf.nodes.find((n) => n.type === 'n8n-nodes-base.scheduleTrigger')!;
    expect(trigger.parameters).toEqual({ rule: { interval: [{ field: 'seconds', secondsInterval: 30 }] } });
    // the nodes the schedule runs, in order (one path; the IF's true branch stores an expired record)
    const order: string[] = [];
    for (const seen = new Set<string>(), queue = [trigger.name]; queue.length;) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      order.push(name);
      queue.push(...(wf.connections[name]?.main ?? []).flat().map((c) => c.node));
    }
    const ops = order.map((n) => byName.get(n)!).map((n) => `${n.type.split('.').pop()}:${String(n.parameters.operation ?? '')}`);
    expect(ops).toEqual(['scheduleTrigger:', 'readWriteFile:read', 'extractFromFile:fromJson', 'filter:', 'singpassSign:expireSession', 'if:',
      'set:', 'singpassSign:submitDocumentHash', 'convertToFile:toText', 'readWriteFile:write']);
    const filter = JSON.stringify(byName.get(order[3])!.parameters);
    for (const part of ['certificate_received', 'record?.submitting?.documentHash', 'record?.state?.updatedAt', '$now.toSeconds()) - 45']) expect(filter).toContain(part);
    // both Submits keep the save point when the service cannot take the hash just now (the engine's rule, no option
    // any more), for the schedule to resubmit
    const submits = wf.nodes.filter((n) => n.parameters.operation === 'submitDocumentHash');
    expect(submits).toHaveLength(2);
    for (const n of submits) expect(n.parameters).not.toHaveProperty('keepOnTemporaryFailure');
  });
});
