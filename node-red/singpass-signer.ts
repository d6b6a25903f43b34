/**
 * The signer's side of a session, for flows that serve it over Node-RED's own HTTP nodes ("http in" → node →
 * "http response"):
 *   signer page   — given the request for one session (`:signRef` in the path, `?link=` the link from *start
 *                   signing*), answers the signer's page (QR code, challenge code, live progress), its status JSON or
 *                   the signed PDF, all read from the session store — so any Node-RED instance on the same store
 *                   answers, whichever one started or finished the session. A missing, altered or expired link is
 *                   refused: a sign_ref alone opens nothing.
 *   officer check — after a Corppass login: only a user holding one of the configured roles for the entity they
 *                   logged in for goes on (with `msg.onBehalfOf` for *start signing*); anyone else gets a refusal page.
 * The page, the status words, the links and the role rule are the core's (src/session, src/login); this file routes.
 */
import { officerDecision } from '../src/login';
import { answerSignerRequest, renderNoticePage, SIGNER_PAGE_HEADERS, type SignerHttpAnswer } from '../src/session';
import { onInput } from './lib/run';
import { recordForMessage, short } from './lib/session-steps';
import { signClientOf, signerLinkKeyOf } from './lib/sign-client';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

type Answer = 'page' | 'status' | 'download' | 'document';
const ANSWERS: Answer[] = ['page', 'status', 'download', 'document'];

type PageDef = NodeDef & { client?: string; answer?: string; title?: string };
type OfficerDef = NodeDef & { roles?: string; eserviceId?: string };

const HTML = { ...SIGNER_PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' };

/** The core's answer as the message an "http response" node sends (JSON answers as objects, as Node-RED sends them). */
function httpAnswer(msg: NodeMessage, a: SignerHttpAnswer): NodeMessage {
  const json = a.headers['content-type']?.startsWith('application/json') && typeof a.body === 'string';
  return { ...msg, statusCode: a.statusCode, headers: a.headers, payload: json ? JSON.parse(a.body as string) as unknown : a.body };
}

export = function register(RED: NodeAPI): void {
  function SignerPage(this: Node, def: PageDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const answer = (ANSWERS.includes(def.answer as Answer) ? def.answer : 'page') as Answer;
    const title = typeof def.title === 'string' && def.title.trim() ? def.title.trim() : undefined;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'signer page');
      const req = (msg.req ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown> };
      const signRef = typeof msg.signRef === 'string' && msg.signRef ? msg.signRef : String(req.params?.signRef ?? '');
      const link = typeof req.query?.link === 'string' ? req.query.link : msg.link;
      const ref = encodeURIComponent(signRef);
      const a = await answerSignerRequest({ signRef, token: link, view: answer === 'page' || answer === 'status' ? answer : 'download' }, {
        ...signerLinkKeyOf(RED, client),
        store: client.store,
        statusUrl: (token) => `${ref}/status?link=${encodeURIComponent(token)}`,
        downloadUrl: (token) => `${ref}/signed.pdf?link=${encodeURIComponent(token)}`,
        ...(title ? { title } : {}),
      });
      if (a.kind === 'refusal') node.status({ fill: 'yellow', shape: 'ring', text: `refused: ${a.code}` });
      else if (a.status) node.status({ fill: a.status.done ? (a.status.stage === 'signed' ? 'green' : 'red') : 'blue', shape: 'dot', text: `${short(signRef)} ${a.status.stage}` });
      else node.status({ fill: 'green', shape: 'dot', text: `${short(signRef)} signed PDF` });
      // `document` hands the PDF to the flow; a refusal is still the caller's answer, on the second output
      if (answer === 'document') return a.kind === 'download' ? [{ ...msg, signRef, payload: a.body, session: recordForMessage(a.record!) }, null] : [null, httpAnswer(msg, a)];
      return httpAnswer(msg, a);
    }, 'reading the session');
  }
  RED.nodes.registerType('singpass-signer-page', SignerPage as never);

  function OfficerCheck(this: Node, def: OfficerDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const roles = String(def.roles ?? '').split(',').map((r) => r.trim()).filter(Boolean);
    const eserviceId = typeof def.eserviceId === 'string' && def.eserviceId.trim() ? def.eserviceId.trim() : undefined;
    if (roles.length === 0) node.status({ fill: 'red', shape: 'ring', text: 'name the roles that may sign' });
    onInput(node, async (msg) => {
      const login = (msg.payload ?? {}) as Record<string, unknown>;
      // the Corppass login node's result: FAPI 2.0 gives `roles` and `entity`; legacy `activeRoles` and `entityInfo`
      const result = { roles: login.roles ?? login.activeRoles ?? [], entityInfo: login.entityInfo, entity: login.entity, scope: login.scope } as unknown as Parameters<typeof officerDecision>[0];
      const decision = officerDecision(result, { roles, ...(eserviceId ? { eserviceId } : {}) });
      if (decision.allowed) {
        node.status({ fill: 'green', shape: 'dot', text: `${decision.onBehalfOf.uen} as ${decision.onBehalfOf.role}` });
        return [{ ...msg, onBehalfOf: decision.onBehalfOf }, null];
      }
      node.status({ fill: 'yellow', shape: 'ring', text: decision.code });
      const refused: NodeMessage = {
        ...msg, statusCode: 403, headers: HTML, error: { code: decision.code, message: decision.message },
        payload: renderNoticePage('You cannot sign for this company', decision.message),
      };
      return [null, refused];
    }, 'checking roles');
  }
  RED.nodes.registerType('singpass-officer-check', OfficerCheck as never);
};
