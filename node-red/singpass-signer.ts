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
import { checkSignerLink, renderNoticePage, renderSignerPage, signerAnswer, signerLinkRefusalStatus, signerStatus, SIGNER_PAGE_HEADERS, type SignerLinkPurpose } from '../src/session';
import { asError, onInput } from './lib/run';
import { recordForMessage, short } from './lib/session-steps';
import { signClientOf, signerLinkKeyOf } from './lib/sign-client';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

type Answer = 'page' | 'status' | 'download' | 'document';
const ANSWERS: Answer[] = ['page', 'status', 'download', 'document'];

type PageDef = NodeDef & { client?: string; answer?: string; title?: string };
type OfficerDef = NodeDef & { roles?: string; eserviceId?: string };

/**
 * Headers of every answer: never cached or framed, and no Referer from the page — its address carries the link.
 */
const PRIVATE = SIGNER_PAGE_HEADERS;
const HTML = { ...PRIVATE, 'content-type': 'text/html; charset=utf-8' };
const JSON_TYPE = { ...PRIVATE, 'content-type': 'application/json; charset=utf-8' };

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
      const key = signerLinkKeyOf(RED, client);
      const refuse = (status: number, code: string, message: string): NodeMessage | (NodeMessage | null)[] => {
        node.status({ fill: 'yellow', shape: 'ring', text: `refused: ${code}` });
        const out: NodeMessage = { ...msg, statusCode: status, headers: answer === 'status' ? JSON_TYPE : HTML,
          payload: answer === 'status' ? { code, message } : renderNoticePage(status === 404 ? 'Signing session not found' : 'This link does not open anything', message) };
        // `document` hands the PDF to the flow; a refusal is still the caller's answer, on the second output
        return answer === 'document' ? [null, out] : out;
      };
      const purpose: SignerLinkPurpose = answer === 'download' || answer === 'document' ? 'download' : 'page';
      try {
        checkSignerLink({ ...key, signRef, purpose, token: link });
      } catch (e) {
        const err = asError(e);
        if (err.code !== 'LINK_INVALID' && err.code !== 'LINK_EXPIRED') throw err;
        return refuse(signerLinkRefusalStatus(err.code), err.code, err.message);
      }
      const record = await client.store.get(signRef);
      if (!record) return refuse(404, 'SIGN_REF_NOT_FOUND', 'This signing session is no longer kept here. Start again for a new one.');
      const ref = encodeURIComponent(signRef);
      const downloadUrl = (token: string) => `${ref}/signed.pdf?link=${encodeURIComponent(token)}`;
      if (answer === 'page' || answer === 'status') {
        const status = signerAnswer(record, { ...key, downloadUrl });
        node.status({ fill: status.done ? (status.stage === 'signed' ? 'green' : 'red') : 'blue', shape: 'dot', text: `${short(signRef)} ${status.stage}` });
        if (answer === 'status') return { ...msg, statusCode: 200, headers: JSON_TYPE, payload: status };
        const html = await renderSignerPage({ status, statusUrl: `${ref}/status?link=${encodeURIComponent(String(link))}`, ...(status.downloadUrl ? { downloadUrl: status.downloadUrl } : {}), ...(title ? { title } : {}) });
        return { ...msg, statusCode: 200, headers: HTML, payload: html };
      }
      const pdf = record.state.status === 'completed' ? await client.store.getSignedDocument(signRef) : undefined;
      if (!pdf) return refuse(404, 'STATE_INVALID', signerStatus(record).stage === 'signed' ? 'The signed PDF is no longer kept here.' : 'This session has no signed PDF (yet).');
      node.status({ fill: 'green', shape: 'dot', text: `${short(signRef)} signed PDF` });
      if (answer === 'document') return [{ ...msg, signRef, payload: pdf, session: recordForMessage(record) }, null];
      // a plain file name: the document's own name (a company suffix keeps its words, its dash becomes "_")
      const name = record.request.documentName.replace(/\.pdf/gi, '').replace(/[^A-Za-z0-9 ._-]/g, '_').slice(0, 100) || 'document';
      return { ...msg, statusCode: 200, headers: { ...PRIVATE, 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${name}-signed.pdf"` }, payload: pdf };
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
      const result = { roles: login.roles ?? login.activeRoles ?? [], entityInfo: login.entityInfo, entity: login.entity } as unknown as Parameters<typeof officerDecision>[0];
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
