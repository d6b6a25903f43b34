/**
 * The conformance scenarios, webhook edges (./scenarios.ts) and faults (./faults.ts), against `singpass-flows serve`:
 * the built CLI in a child process with a folder store, against the sandbox over real HTTP.
 */
import { serveFrontEnd } from './front-ends';
import { conformanceSuite } from './suite';

conformanceSuite(serveFrontEnd, 'serve');
