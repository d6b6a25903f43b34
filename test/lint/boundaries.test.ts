/**
 * The house's boundaries are enforced by the core lint (eslint.core.config.mjs, no-restricted-imports): the core
 * imports no sandbox, front end or engine API; the sandbox shares no code with the client; the front ends do not
 * import each other, and reach a core area through its entry (src/session), not its files. Each case is a probe
 * file written where a maintainer would put it and linted with the real config (all in one eslint run).
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');

/** Probe files (path → source), written where a maintainer would put them, linted in ONE eslint run (each run costs
 * seconds: the type-aware config builds a TypeScript program), then removed. */
const PROBES: Record<string, string> = {
  'src/session/boundary-probe-a.ts': "import { startSandbox } from '../../sandbox';\nexport const probe = startSandbox;\n",
  'src/session/boundary-probe-b.ts': "import { signingEngine } from '../../nodes/shared/engine';\nimport type { INodeType } from 'n8n-workflow';\nexport const probe: [typeof signingEngine, INodeType | undefined] = [signingEngine, undefined];\n",
  'sandbox/boundary-probe-c.ts': "import { createWebhookVerifier } from '../src/sign';\nexport const probe = createWebhookVerifier;\n",
  'node-red/lib/boundary-probe-e.ts': "import { CREDENTIAL } from '../../nodes/shared/credentials';\nexport const probe = CREDENTIAL;\n",
  'nodes/shared/boundary-probe-f.ts': "import { nextStep } from '../../src/session/next-step';\nexport const probe = nextStep;\n",
  'cli/boundary-probe-g.ts': "import { nodeRedSessionStore } from '../node-red/lib/store-factory';\nexport const probe = nodeRedSessionStore;\n",
  'nodes/shared/boundary-probe-d.ts': "import { nextStep } from '../../src/session';\nexport const probe = nextStep;\n",
};
const messages = new Map<string, string>();

beforeAll(async () => {
  for (const [rel, source] of Object.entries(PROBES)) writeFileSync(join(root, rel), source);
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(join(root, 'node_modules/.bin/eslint'), ['-c', 'eslint.core.config.mjs', '--rule', '{"@typescript-eslint/no-unused-vars":"off"}', '--format', 'json', ...Object.keys(PROBES)], { cwd: root, maxBuffer: 16 * 1024 * 1024 }));
  } catch (e) {
    stdout = String((e as { stdout?: string }).stdout ?? ''); // eslint exits 1 when it reports errors
    if (!stdout) throw e;
  } finally {
    for (const rel of Object.keys(PROBES)) rmSync(join(root, rel), { force: true });
  }
  for (const r of JSON.parse(stdout) as Array<{ filePath: string; messages: Array<{ ruleId: string | null; message: string }> }>) {
    messages.set(relative(root, r.filePath), r.messages.map((m) => `${m.ruleId ?? ''}: ${m.message}`).join('\n'));
  }
}, 120_000);
afterAll(() => Object.keys(PROBES).forEach((rel) => rmSync(join(root, rel), { force: true })));

/** What the lint said of one probe ('' when nothing). */
function lint(rel: string): string {
  if (!messages.has(rel)) throw new Error(`${rel} was not linted`);
  return messages.get(rel)!;
}

describe('core lint boundaries', () => {
  it('the core importing the sandbox fails the lint, naming why', () => {
    const out = lint('src/session/boundary-probe-a.ts');
    expect(out).toContain('no-restricted-imports');
    expect(out).toContain('The core must not import the sandbox');
  });

  it('the core importing a front end or n8n-workflow fails the lint', () => {
    const out = lint('src/session/boundary-probe-b.ts');
    expect(out).toContain('The core must not import a front end');
    expect(out).toContain('The core is engine-agnostic');
  });

  it('the sandbox importing client protocol code fails the lint', () => {
    const out = lint('sandbox/boundary-probe-c.ts');
    expect(out).toContain('The sandbox shares no code with the client');
  });

  it('the Node-RED nodes importing the n8n nodes fails the lint (siblings share through the core)', () => {
    const out = lint('node-red/lib/boundary-probe-e.ts');
    expect(out).toContain('The Node-RED nodes are a sibling front end');
  });

  it('a front end importing a file inside a core area (not its entry) fails the lint', () => {
    const out = lint('nodes/shared/boundary-probe-f.ts');
    expect(out).toContain('Import a core area through its entry');
  });

  it('the CLI importing the Node-RED nodes fails the lint', () => {
    const out = lint('cli/boundary-probe-g.ts');
    expect(out).toContain('The CLI is a sibling front end');
  });

  it('an allowed import (a front end using the core) passes', () => {
    expect(lint('nodes/shared/boundary-probe-d.ts')).toBe('');
  });
});
