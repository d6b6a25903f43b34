/**
 * The conformance scenarios, webhook edges (./scenarios.ts) and faults (./faults.ts), against a real Node-RED with
 * the signing example deployed (its session folder store), against the sandbox over real HTTP. The edges need the
 * signing webhook node to answer through the core's front door; before that, a sign_ref it never stored got 400 at
 * once (not 503) and a new event for an ended session 200 (not 400 SIGN_REF_NOT_FOUND).
 */
import { nodeRedFrontEnd } from './front-ends';
import { conformanceSuite } from './suite';

conformanceSuite(nodeRedFrontEnd, 'Node-RED');
