/**
 * Corppass and Singpass login nodes, one per provider, each with an action:
 *   start     — the provider's authorization URL: `msg.statusCode` 302 + `msg.headers.location`, and the login
 *               transaction SEALED (AES-GCM under the client's transaction secret) in an HttpOnly cookie on
 *               `msg.cookies`, so an "http response" node redirects the browser and the callback is bound to it;
 *   complete  — the callback (query from the "http in" node, cookie from the request): code redeemed, identity
 *               verified; Corppass legacy also fetches the authorization info (roles) at once, Corppass FAPI 2.0
 *               gives the core's result (user, entity, roles from userinfo with scope authinfo);
 *   roles     — Corppass legacy only: the authorization info for `msg.accessToken` (when complete kept it).
 * The login rules (PKCE, state/nonce, DPoP, token and claim checks, roles) are the core's (src/login).
 */
import { SingpassFlowsError } from '../src/errors';
import { activeRoles, createSingpassClient, requireRolesScope } from '../src/login';
import {
  LOGIN_COOKIE, corppassFapiOutput, corppassLoginClient, fapiRolesRefusal, readCallback, readTransaction, startCorppassLogin, startLoginOutput,
  type LoginProvider, type LoginStart,
} from '../src/setup';
import { loginClientOf } from './lib/login-client';
import { onInput } from './lib/run';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

type Action = 'start' | 'complete' | 'roles';

type Def = NodeDef & {
  client?: string; action?: string; scope?: string; fetchRoles?: boolean; includeAccessToken?: boolean;
  acrValues?: string; requiredAcr?: string; authenticationContextType?: string; authenticationContextMessage?: string;
};

const ACTIONS: Record<LoginProvider, Action[]> = { corppass: ['start', 'complete', 'roles'], singpass: ['start', 'complete'] };
const TITLE: Record<LoginProvider, string> = { corppass: 'Corppass login', singpass: 'Singpass login' };

export = function register(RED: NodeAPI): void {
  for (const provider of ['corppass', 'singpass'] as const) {
    function Login(this: Node, def: Def) {
      RED.nodes.createNode(this, def);
      const node = this;
      const action = (def.action ?? 'start') as Action;
      node.status({ fill: 'grey', shape: 'ring', text: action });
      onInput(node, async (msg) => {
        if (!ACTIONS[provider].includes(action)) throw new SingpassFlowsError('INVALID_INPUT', `${TITLE[provider]}: action "${String(def.action)}" is not one of ${ACTIONS[provider].join(', ')}`, { field: 'action' });
        const config = loginClientOf(RED, def.client, provider, TITLE[provider]);
        const { transactionSecret, ...options } = await config.options();
        let out: NodeMessage;
        if (action === 'start') {
          const scope = text(msg.scope) ?? text(def.scope) ?? (provider === 'corppass' ? 'openid authinfo' : 'openid user.identity name');
          const context = { authenticationContextType: text(def.authenticationContextType), authenticationContextMessage: text(def.authenticationContextMessage) };
          const start = provider === 'corppass'
            ? await startCorppassLogin(corppassLoginClient(options, config.corppassProfile, config.labels), { scope, ...context })
            : await createSingpassClient(options).startLogin({ scope, acrValues: text(def.acrValues), ...context });
          out = startMessage(msg, start, transactionSecret);
          node.status({ fill: 'yellow', shape: 'ring', text: 'redirected to log in' });
        } else if (action === 'complete') {
          const transaction = readTransaction(transactionOf(msg), transactionSecret);
          const callback = readCallback(callbackOf(msg));
          if (provider === 'corppass') {
            const client = corppassLoginClient(options, config.corppassProfile, config.labels);
            if (client.profile === 'fapi') {
              out = completedMessage(msg, corppassFapiOutput(await client.completeLogin({ transaction, callback })), undefined);
              node.status({ fill: 'green', shape: 'dot', text: 'logged in' });
              return out;
            }
            const login = await client.completeLogin({ transaction, callback });
            const payload: Record<string, unknown> = { subject: login.subject, userInfo: login.userInfo, entityInfo: login.entityInfo, idTokenClaims: login.idTokenClaims, scope: login.scope };
            if (def.fetchRoles !== false) {
              requireRolesScope(login.scope, { what: 'Fetching the roles', thirdPartyToo: true, orElse: 'turn "fetch the roles" off' });
              const info = await client.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
              payload.authorizationInfo = info;
              payload.activeRoles = activeRoles(info);
            }
            out = completedMessage(msg, payload, def.includeAccessToken ? login.accessToken : undefined);
          } else {
            const required = text(def.requiredAcr);
            const login = await createSingpassClient({ ...options, ...(required ? { requiredAcr: required } : {}) }).completeLogin({ transaction, callback });
            out = completedMessage(msg, JSON.parse(JSON.stringify(login)) as Record<string, unknown>, undefined);
          }
          node.status({ fill: 'green', shape: 'dot', text: 'logged in' });
        } else {
          if (config.corppassProfile.profile === 'fapi') throw fapiRolesRefusal(`${TITLE[provider]}, action "roles"`);
          const accessToken = text(msg.accessToken);
          const subject = text(msg.subject) ?? text((msg.payload as { subject?: { raw?: unknown } } | undefined)?.subject?.raw);
          if (!accessToken) throw new SingpassFlowsError('INVALID_INPUT', 'msg.accessToken: set it (a "complete login" node with "keep the access token" on puts it there)', { field: 'msg.accessToken' });
          if (!subject) throw new SingpassFlowsError('INVALID_INPUT', 'msg.subject: the "sub" of the user who logged in (msg.payload.subject.raw of "complete login")', { field: 'msg.subject' });
          const client = corppassLoginClient(options, config.corppassProfile, config.labels);
          if (client.profile === 'fapi') throw fapiRolesRefusal(`${TITLE[provider]}, action "roles"`);
          const info = await client.getAuthorizationInfo({ accessToken, expectedSub: subject });
          const on = text(msg.activeOn);
          out = { ...msg, payload: { ...info, activeRoles: on ? activeRoles(info, on) : activeRoles(info) } };
          node.status({ fill: 'green', shape: 'dot', text: 'roles fetched' });
        }
        return out;
      }, action === 'start' ? 'starting login' : action === 'complete' ? 'completing login' : 'fetching roles');
    }
    RED.nodes.registerType(`${provider}-login`, Login as never);
  }
};

/** Redirect with the sealed transaction in an HttpOnly cookie (an "http response" node applies both). */
function startMessage(msg: NodeMessage, start: LoginStart, secret: string): NodeMessage {
  const tx = start.transaction;
  const o = startLoginOutput(start, secret) as { loginUrl: string; loginUrlExpiresAt?: string; transaction: string; expiresAt: string };
  const cookie = { value: o.transaction, path: '/', httpOnly: true, sameSite: 'lax', secure: tx.redirectUri.startsWith('https:'), maxAge: Math.max(0, tx.expiresAt - Date.now()) };
  return {
    ...msg,
    payload: { loginUrl: o.loginUrl, ...(o.loginUrlExpiresAt ? { loginUrlExpiresAt: o.loginUrlExpiresAt } : {}), expiresAt: o.expiresAt },
    loginUrl: o.loginUrl,
    transaction: o.transaction,
    statusCode: 302,
    headers: { location: o.loginUrl },
    cookies: { [LOGIN_COOKIE]: cookie },
  };
}

/** The result on msg.payload; the one-time cookie is cleared; the access token only when asked for. */
function completedMessage(msg: NodeMessage, payload: Record<string, unknown>, accessToken: string | undefined): NodeMessage {
  const out: NodeMessage = { ...msg, payload, cookies: { [LOGIN_COOKIE]: null } };
  delete out.transaction;
  if (accessToken) {
    out.accessToken = accessToken;
    out.subject = (payload.subject as { raw?: string } | undefined)?.raw;
  }
  return out;
}

/** `msg.transaction` if set, else the cookie of the callback request ("http in" parses cookies). */
function transactionOf(msg: NodeMessage): unknown {
  if (typeof msg.transaction === 'string' && msg.transaction) return msg.transaction;
  const req = msg.req as { cookies?: Record<string, unknown>; headers?: Record<string, unknown> } | undefined;
  const c = req?.cookies?.[LOGIN_COOKIE];
  if (typeof c === 'string' && c) return c;
  return req?.headers?.cookie;
}

/** The callback's query: the "http in" GET node puts it on msg.payload (and msg.req.query); or a full URL. */
function callbackOf(msg: NodeMessage): unknown {
  if (typeof msg.callbackUrl === 'string') return msg.callbackUrl;
  const req = msg.req as { query?: unknown } | undefined;
  if (req?.query && typeof req.query === 'object' && Object.keys(req.query).length > 0) return req.query;
  return msg.payload;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}
