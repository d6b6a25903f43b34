/**
 * The house's boundaries are enforced by the core lint (eslint.core.config.mjs, no-restricted-imports): the core
 * imports no sandbox, front end or engine API; the sandbox shares no code with the client; the front ends do not
 * import each other, and reach a core area through its entry (src/session), not its files. Each case writes a probe file where a maintainer would, lints it with the real config,
 * and removes it.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const probes: string[] = [];
afterAll(() => probes.forEach((p) => rmSync(p, { force: true })));

async function lint(relPath: string, source: string): Promise<string> {
  const file = join(root, relPath);
  probes.push(file);
  writeFileSync(file, source);
  try {
    await promisify(execFile)(join(root, 'node_modules/.bin/eslint'), ['-c', 'eslint.core.config.mjs', '--rule', '{"@typescript-eslint/no-unused-vars":"off"}', relPath], { cwd: root });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  } finally {
    rmSync(file, { force: true });
  }
}

describe('core lint boundaries', () => {
  it('the core importing the sandbox fails the lint, naming why', async () => {
    const out = await lint('src/session/boundary-probe-a.ts', "import { startSandbox } from '../../sandbox';\nexport const probe = startSandbox;\n");
    expect(out).toContain('no-restricted-imports');
    expect(out).toContain('The core must not import the sandbox');
  }, 60_000);

  it('the core importing a front end or n8n-workflow fails the lint', async () => {
    const out = await lint('src/session/boundary-probe-b.ts', "import { signingEngine } from '../../nodes/shared/engine';\nimport type { INodeType } from 'n8n-workflow';\nexport const probe: [typeof signingEngine, INodeType | undefined] = [signingEngine, undefined];\n");
    expect(out).toContain('The core must not import a front end');
    expect(out).toContain('The core is engine-agnostic');
  }, 60_000);

  it('the sandbox importing client protocol code fails the lint', async () => {
    const out = await lint('sandbox/boundary-probe-c.ts', "import { createWebhookVerifier } from '../src/sign';\nexport const probe = createWebhookVerifier;\n");
    expect(out).toContain('The sandbox shares no code with the client');
  }, 60_000);

  it('the Node-RED nodes importing the n8n nodes fails the lint (siblings share through the core)', async () => {
    const out = await lint('node-red/lib/boundary-probe-e.ts', "import { CREDENTIAL } from '../../nodes/shared/credentials';\nexport const probe = CREDENTIAL;\n");
    expect(out).toContain('The Node-RED nodes are a sibling front end');
  }, 60_000);

  it('a front end importing a file inside a core area (not its entry) fails the lint', async () => {
    const out = await lint('nodes/shared/boundary-probe-f.ts', "import { nextStep } from '../../src/session/next-step';\nexport const probe = nextStep;\n");
    expect(out).toContain('Import a core area through its entry');
  }, 60_000);

  it('the CLI importing the Node-RED nodes fails the lint', async () => {
    const out = await lint('cli/boundary-probe-g.ts', "import { ContextSessionStore } from '../node-red/lib/session-store';\nexport const probe = ContextSessionStore;\n");
    expect(out).toContain('The CLI is a sibling front end');
  }, 60_000);

  it('an allowed import (a front end using the core) passes', async () => {
    expect(await lint('nodes/shared/boundary-probe-d.ts', "import { nextStep } from '../../src/session';\nexport const probe = nextStep;\n")).toBe('');
  }, 60_000);
});
