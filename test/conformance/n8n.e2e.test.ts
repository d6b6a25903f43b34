/**
 * The conformance scenarios, webhook edges (./scenarios.ts) and faults (./faults.ts), against a real n8n 2.41 (one
 * process: queue mode is ./n8n-queue.e2e.test.ts) running the sample signing workflow with its Folder store, against
 * the sandbox over real HTTP. Needs `bash scripts/install-n8n.sh`
 * first (skipped without it locally, failing in CI). The scenarios n8n does not pass yet are listed as to do, with
 * how it answers today; remove an entry when it passes. (A copy of the event an ended session applied is answered
 * 200 since the trigger answers through the core's front door; before that, 400 SIGN_REF_NOT_FOUND.)
 */
import { n8nInstallDir } from '../n8n/real-n8n';
import { n8nFrontEnd } from './front-ends';
import { conformanceSuite } from './suite';

if (!n8nInstallDir() && process.env.CI) throw new Error('n8n is not installed: run scripts/install-n8n.sh before the tests');

if (n8nInstallDir()) {
  conformanceSuite(n8nFrontEnd, 'n8n', {
    notJson: 'n8n itself answers 422 ("Failed to parse request body") to a JSON-typed body that is not JSON, before the trigger runs',
  }, { startTimeoutMs: 900_000 });
} else describe.skip('webhook conformance: n8n (not installed: scripts/install-n8n.sh)', () => it.todo('install n8n'));
