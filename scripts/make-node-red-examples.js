#!/usr/bin/env node
// Writes examples/*.json, the flows Node-RED lists under Import ▸ Examples (the demo deploys the signing one).
// The flows' structure is here; the function nodes' bodies and the pages are files of their own under
// scripts/node-red-examples/ (functions/*.js are linted by eslint.examples.config.mjs, with the pages' inline scripts),
// read verbatim. Run it after changing a flow or one of those files:
//   node scripts/make-node-red-examples.js [--out <dir>]
// test/scripts/node-red-examples.test.ts regenerates into a temporary folder and compares with examples/ byte for byte.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SOURCES = path.join(__dirname, 'node-red-examples');
const fn = (name) => fs.readFileSync(path.join(SOURCES, 'functions', name), 'utf8');
const page = (name) => fs.readFileSync(path.join(SOURCES, 'pages', name), 'utf8');

const SIGNED_DIR = '($d := $env("SINGPASS_SIGNED_DIR"); $d ? $d : "signed")';
const HTML = { 'content-type': 'text/html; charset=utf-8' };
// The sample documents the signing page offers (cli/demo ships them; SINGPASS_SAMPLES_DIR names their folder). The two
// sample functions get this list as `const SAMPLES = [...]` before their body (eslint.examples.config.mjs declares it).
const SAMPLES = ['tenancy-agreement.pdf', 'consent-form.pdf'];
const SAMPLES_JS = 'const SAMPLES = [' + SAMPLES.map((s) => JSON.stringify(s)).join(', ') + '];\n';
// Who signs, in order, in the several-signers example (its two signer functions get `const SIGNERS = [...]`).
const SIGNERS_JS = 'const SIGNERS = ["Landlord", "Tenant"];\n';

/** A node on the tab `z` (the tab's id comes first, as Node-RED exports it). */
const on = (z) => (props) => ({ z, ...props });

/**
 * The two config nodes a signing flow needs: the notification token secret `<prefix>-secret` and the Sign API client
 * `<prefix>-sign-client` using it, every field of the client in the editor's order, empty unless `settings` sets it.
 */
const signConfigNodes = (prefix, settings) => [
  { id: `${prefix}-secret`, type: 'singpass-notification-secret', name: 'webhook token secret' },
  { id: `${prefix}-sign-client`, type: 'singpass-sign-client', name: '', environment: 'staging', sandboxUrl: '', baseUrl: '',
    keySetUrl: '', clientId: '', domainName: '', tenantId: '', tsaUrl: '', trustedRoots: '', ...settings,
    notificationSecret: `${prefix}-secret`, sessionStore: 'folder', sessionDir: '', handOverLeaseSeconds: '', handOverWindowSeconds: '' },
];

/**
 * The end of every signing flow: the signed PDF written to the signed folder as `<signRef>.pdf` (a repeated hand-over
 * overwrites it), then acknowledged, so the session completes; a Catch on the write reports the failure (the webhook
 * node hands the PDF over again). `p` prefixes the ids; `after` is what follows the acknowledgement.
 */
const storeAndAcknowledge = (n, p, client, x, y, after, failedTo) => [
  n({ id: `${p}-file-name`, type: 'change', name: 'signed/<signRef>.pdf', rules: [{ t: 'set', p: 'filename', pt: 'msg',
    to: SIGNED_DIR + ' & "/" & signRef & ".pdf"', tot: 'jsonata' }], x, y, wires: [[`${p}-write`]] }),
  n({ id: `${p}-write`, type: 'file', name: 'write signed PDF', filename: 'filename', filenameType: 'msg', appendNewline: false, createDir: true, overwriteFile: 'true', encoding: 'none', x: x + 210, y, wires: [[`${p}-stored`]] }),
  n({ id: `${p}-stored`, type: 'singpass-sign-stored', name: 'signed PDF stored', client, outcome: 'stored', x: x + 400, y, wires: [after] }),
  n({ id: `${p}-write-catch`, type: 'catch', name: 'storing failed', scope: [`${p}-write`], uncaught: false, x: x + 210, y: y + 45, wires: [[`${p}-store-failed`]] }),
  n({ id: `${p}-store-failed`, type: 'singpass-sign-stored', name: 'storing failed: hand over again', client, outcome: 'failed', x: x + 430, y: y + 45, wires: [failedTo] }),
];

function signing() {
  const tab = 'sf-sign-tab';
  const n = on(tab);
  return [
    { id: tab, type: 'tab', label: 'Singpass document signing', info:
        'Sign a PDF end to end. Needs the signing key and token secret pasted into the config nodes (sessions are kept in ' +
        '<userDir>/singpass-sessions: nothing to set in settings.js), and the sandbox ' +
        '(npx singpass-flows sandbox --client-id node-red-dsap --jwks-url http://127.0.0.1:1880/singpass/jwks ' +
        '--webhook-url http://127.0.0.1:1880/singpass/sign/webhook) or your onboarded environment. ' +
        'Signed PDFs and results.jsonl / errors.jsonl go to $SINGPASS_SIGNED_DIR (default ./signed); each signed PDF is ' +
        'acknowledged once written (signed PDF stored), else handed over again after the client\'s hand-over lease. ' +
        'Only signed-in users start sessions: set SINGPASS_SIGN_USER and SINGPASS_SIGN_PASSWORD (16+ characters) in ' +
        'Node-RED\'s environment or as this tab\'s environment variables (the password as a credential); until then ' +
        '/sign and /sign/start refuse everyone. Each session\'s signer page (/sign/s/<signRef>?link=...) opens only with ' +
        'the link start signing issued; the webhook keeps its own check (the service\'s signed JWT).' },
    ...signConfigNodes('sf', { name: 'Singpass Sign (sandbox)', environment: 'sandbox', sandboxUrl: 'http://127.0.0.1:5156',
      clientId: 'node-red-dsap', domainName: 'localhost', tenantId: 'example' }),

    n({ id: 'sf-c1', type: 'comment', name: '1. Signed-in users (SINGPASS_SIGN_USER / SINGPASS_SIGN_PASSWORD) upload a PDF and get its signer page', x: 390, y: 40, wires: [] }),
    n({ id: 'sf-page-in', type: 'http in', name: '', url: '/sign', method: 'get', upload: false, swaggerDoc: '', x: 130, y: 80, wires: [['sf-page-auth']] }),
    n({ id: 'sf-page-auth', type: 'function', name: 'sign-in check', func: fn('sign-in-check.js'), outputs: 2, x: 300, y: 80, wires: [['sf-page'], ['sf-refused']] }),
    n({ id: 'sf-page', type: 'template', name: 'upload page', field: 'payload', fieldType: 'msg', format: 'html', syntax: 'plain', template: page('signing-page.html'), output: 'str', x: 480, y: 80, wires: [['sf-page-out']] }),
    n({ id: 'sf-page-out', type: 'http response', name: '', statusCode: '', headers: HTML, x: 650, y: 80, wires: [] }),
    n({ id: 'sf-refused', type: 'http response', name: 'refused', statusCode: '', headers: {}, x: 830, y: 80, wires: [] }),

    n({ id: 'sf-start-in', type: 'http in', name: '', url: '/sign/start', method: 'post', upload: false, swaggerDoc: '', x: 150, y: 140, wires: [['sf-start-auth']] }),
    n({ id: 'sf-start-auth', type: 'function', name: 'sign-in check', func: fn('sign-in-check.js'), outputs: 2, x: 320, y: 140, wires: [['sf-name'], ['sf-refused']] }),
    n({ id: 'sf-name', type: 'change', name: 'document name', rules: [{ t: 'set', p: 'documentName', pt: 'msg', to: 'req.query.name', tot: 'msg' }], x: 490, y: 140, wires: [['sf-start']] }),
    n({ id: 'sf-start', type: 'singpass-sign-start', name: 'start signing', client: 'sf-sign-client', documentName: '', level: 'B-LTA', reason: 'Signed with Singpass', location: '', box: 'corner', boxPage: 'last', boxCorner: 'bottom-right', boxRect: '', boxField: '', boxSize: '', x: 660, y: 140, wires: [['sf-started']] }),
    n({ id: 'sf-started', type: 'change', name: 'session + signer page link', rules: [{ t: 'set', p: 'payload', pt: 'msg',
      to: '{"signRef": signRef, "challengeCode": challengeCode, "expiresAt": expiresAt, "qr": qr.dataUrl, "page": "sign/s/" & $encodeUrlComponent(signRef) & "?link=" & $encodeUrlComponent(signerLink.token)}', tot: 'jsonata' }], x: 870, y: 140, wires: [['sf-start-out']] }),
    n({ id: 'sf-start-out', type: 'http response', name: '', statusCode: '', headers: { 'cache-control': 'no-store' }, x: 1060, y: 140, wires: [] }),
    n({ id: 'sf-start-catch', type: 'catch', name: 'start failed', scope: ['sf-start'], uncaught: false, x: 660, y: 190, wires: [['sf-start-error']] }),
    n({ id: 'sf-start-error', type: 'change', name: 'error answer', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '{"code": error.code, "message": error.message, "serviceCode": serviceCode}', tot: 'jsonata' },
      { t: 'set', p: 'statusCode', pt: 'msg', to: '400', tot: 'num' }], x: 870, y: 190, wires: [['sf-start-out']] }),

    n({ id: 'sf-c2', type: 'comment', name: '2. The signing service calls the webhook: certificate → check → hash; signature → signed PDF → written → acknowledged', x: 430, y: 260, wires: [] }),
    n({ id: 'sf-webhook', type: 'singpass-sign-webhook', name: '', client: 'sf-sign-client', url: '/singpass/sign/webhook', x: 160, y: 340, wires: [['sf-on-cert'], ['sf-on-sig'], ['sf-on-error'], ['sf-file-name']] }),
    n({ id: 'sf-on-cert', type: 'singpass-sign-apply', name: 'certificate: check status (OCSP) → prepare → submit hash', client: 'sf-sign-client', x: 530, y: 300, wires: [[]] }),
    n({ id: 'sf-on-sig', type: 'singpass-sign-apply', name: 'signature received', client: 'sf-sign-client', x: 440, y: 350, wires: [['sf-finish']] }),
    n({ id: 'sf-finish', type: 'singpass-sign-finish', name: 'finalize → validation data → document timestamp → verify', client: 'sf-sign-client', x: 790, y: 350, wires: [['sf-file-name']] }),
    ...storeAndAcknowledge(n, 'sf', 'sf-sign-client', 230, 420, ['sf-result'], ['sf-error-line']),
    n({ id: 'sf-result', type: 'change', name: 'result line', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '$string({"signRef": signRef, "status": session.state.status, "phase": session.phase, "level": session.result.level, "missing": session.result.missing, "valid": session.result.valid, "attempt": handOver.attempt, "file": filename, "at": $now()})', tot: 'jsonata' },
      { t: 'set', p: 'filename', pt: 'msg', to: SIGNED_DIR + ' & "/results.jsonl"', tot: 'jsonata' }], x: 840, y: 420, wires: [['sf-record']] }),
    n({ id: 'sf-record', type: 'file', name: 'record result', filename: 'filename', filenameType: 'msg', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 1020, y: 420, wires: [[]] }),

    n({ id: 'sf-c3', type: 'comment', name: '3. Errors: the session failed (declined, revoked certificate, …) → errors.jsonl', x: 360, y: 490, wires: [] }),
    n({ id: 'sf-on-error', type: 'singpass-sign-apply', name: 'session failed', client: 'sf-sign-client', x: 430, y: 530, wires: [['sf-error-line']] }),
    n({ id: 'sf-catch', type: 'catch', name: 'signing errors', scope: ['sf-on-cert', 'sf-on-sig', 'sf-finish', 'sf-stored', 'sf-webhook'], uncaught: false, x: 420, y: 580, wires: [['sf-error-line']] }),
    n({ id: 'sf-error-line', type: 'change', name: 'error line', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '$string({"signRef": signRef, "code": error.code ? error.code : session.error.code, "message": error.message ? error.message : session.error.message, "serviceCode": session.error ? session.error.serviceCode : session.state.error.code, "at": $now()})', tot: 'jsonata' },
      { t: 'set', p: 'filename', pt: 'msg', to: SIGNED_DIR + ' & "/errors.jsonl"', tot: 'jsonata' }], x: 640, y: 550, wires: [['sf-error-record']] }),
    n({ id: 'sf-error-record', type: 'file', name: 'record error', filename: 'filename', filenameType: 'msg', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 830, y: 550, wires: [[]] }),

    n({ id: 'sf-c4', type: 'comment', name: '4. Your public key set (register this URL as your JWKS URL)', x: 300, y: 650, wires: [] }),
    n({ id: 'sf-keyset', type: 'singpass-keyset', name: '', url: '/singpass/jwks', signClient: 'sf-sign-client', corppassClient: '', singpassClient: '', x: 150, y: 690, wires: [] }),
  ];
}

/**
 * The signer's page (ids sf-p-*): the page, its status and the signed PDF come from the session store through the
 * signer page node, so any Node-RED instance on the store answers; each opens only with the session's link. Also the
 * verification report of the signed PDF, and the sample documents the upload page offers (signed-in users only).
 */
function addSigningPage(flow) {
  const tab = flow.find((node) => node.type === 'tab').id;
  const n = on(tab);
  const y = 780;
  const signer = (id, answer, x, yy, wires) => n({ id, type: 'singpass-signer-page', name: '', client: 'sf-sign-client', answer, title: '', outputs: answer === 'document' ? 2 : 1, x, y: yy, wires });
  return flow.concat([
    n({ id: 'sf-p-c', type: 'comment', name: '5. The signer page (its link opens it): QR code, progress, signed PDF, verification report; sample documents', x: 440, y, wires: [] }),
    n({ id: 'sf-p-page-in', type: 'http in', name: '', url: '/sign/s/:signRef', method: 'get', upload: false, swaggerDoc: '', x: 170, y: y + 40, wires: [['sf-p-page']] }),
    signer('sf-p-page', 'page', 420, y + 40, [['sf-p-out']]),
    n({ id: 'sf-p-status-in', type: 'http in', name: '', url: '/sign/s/:signRef/status', method: 'get', upload: false, swaggerDoc: '', x: 180, y: y + 90, wires: [['sf-p-status']] }),
    signer('sf-p-status', 'status', 420, y + 90, [['sf-p-out']]),
    n({ id: 'sf-p-signed-in', type: 'http in', name: '', url: '/sign/s/:signRef/signed.pdf', method: 'get', upload: false, swaggerDoc: '', x: 190, y: y + 140, wires: [['sf-p-signed']] }),
    signer('sf-p-signed', 'download', 420, y + 140, [['sf-p-out']]),

    n({ id: 'sf-p-report-in', type: 'http in', name: '', url: '/sign/s/:signRef/report', method: 'get', upload: false, swaggerDoc: '', x: 180, y: y + 190, wires: [['sf-p-document']] }),
    signer('sf-p-document', 'document', 420, y + 190, [['sf-p-verify'], ['sf-p-out']]),
    n({ id: 'sf-p-verify', type: 'singpass-pdf-verify', name: '', client: 'sf-sign-client', failInvalid: false, x: 590, y: y + 190, wires: [['sf-p-report-data']] }),
    n({ id: 'sf-p-report-data', type: 'function', name: 'report data', func: fn('report-data.js'), outputs: 1, x: 750, y: y + 190, wires: [['sf-p-report']] }),
    n({ id: 'sf-p-report', type: 'template', name: 'verification report page', field: 'payload', fieldType: 'msg', format: 'html', syntax: 'mustache', template: page('verification-report.html'), output: 'str', x: 940, y: y + 190, wires: [['sf-p-html']] }),
    n({ id: 'sf-p-html', type: 'http response', name: '', statusCode: '', headers: HTML, x: 1130, y: y + 190, wires: [] }),

    n({ id: 'sf-p-samples-in', type: 'http in', name: '', url: '/sign/samples', method: 'get', upload: false, swaggerDoc: '', x: 160, y: y + 240, wires: [['sf-p-samples-auth']] }),
    n({ id: 'sf-p-samples-auth', type: 'function', name: 'sign-in check', func: fn('sign-in-check.js'), outputs: 2, x: 330, y: y + 240, wires: [['sf-p-samples'], ['sf-p-out']] }),
    n({ id: 'sf-p-samples', type: 'function', name: 'sample list', func: SAMPLES_JS + fn('sample-list.js'), outputs: 1, x: 520, y: y + 240, wires: [['sf-p-out']] }),
    n({ id: 'sf-p-sample-in', type: 'http in', name: '', url: '/sign/samples/:name', method: 'get', upload: false, swaggerDoc: '', x: 170, y: y + 290, wires: [['sf-p-sample-auth']] }),
    n({ id: 'sf-p-sample-auth', type: 'function', name: 'sign-in check', func: fn('sign-in-check.js'), outputs: 2, x: 340, y: y + 290, wires: [['sf-p-sample-file'], ['sf-p-out']] }),
    n({ id: 'sf-p-sample-file', type: 'function', name: 'sample path', func: SAMPLES_JS + fn('sample-path.js'), outputs: 2, x: 520, y: y + 290, wires: [['sf-p-read'], ['sf-p-out']] }),
    n({ id: 'sf-p-read', type: 'file in', name: 'read PDF', filename: 'filename', filenameType: 'msg', format: '', chunk: false, sendError: false, encoding: 'none', allProps: false, x: 700, y: y + 290, wires: [['sf-p-out']] }),

    n({ id: 'sf-p-catch', type: 'catch', name: 'file not readable', scope: ['sf-p-read'], uncaught: false, x: 700, y: y + 340, wires: [['sf-p-not-found']] }),
    n({ id: 'sf-p-not-found', type: 'change', name: '404', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '{"code": "INVALID_INPUT", "message": "The file is not there any more"}', tot: 'json' },
      { t: 'set', p: 'statusCode', pt: 'msg', to: '404', tot: 'num' },
      { t: 'delete', p: 'headers', pt: 'msg' }], x: 880, y: y + 340, wires: [['sf-p-out']] }),
    n({ id: 'sf-p-out', type: 'http response', name: '', statusCode: '', headers: {}, x: 1130, y: y + 90, wires: [] }),
  ]);
}

const LOGIN_KEYS_NOTE = (jwks, callback) =>
  'Paste your private signing and encryption keys (JWK or PEM; `npx singpass-flows keys` makes a pair) ' +
  'and a transaction secret of 32+ characters into the client config node, and register ' +
  `${jwks} as your key set URL and ${callback} as your redirect URI with the provider.`;

/** Corppass (with roles) or Singpass login: /<base>/login redirects, /<base>/callback shows who logged in. */
function login(provider) {
  const cp = provider === 'corppass';
  const p = cp ? 'cp' : 'sp';
  const base = cp ? '/corppass' : '/singpass-login';
  const tab = `${p}-login-tab`;
  const n = on(tab);
  const nodeType = cp ? 'corppass-login' : 'singpass-login';
  const title = cp ? 'Corppass login with roles' : 'Singpass login';
  const client = cp
    // The roles example uses the legacy (pre-FAPI) Corppass profile: pinned, so that an import keeps it (a client
    // saved without a profile is legacy, but the editor gives a new one FAPI 2.0).
    ? { id: `${p}-client`, type: 'corppass-client', name: 'Corppass (sandbox)', profile: 'legacy', environment: 'sandbox' }
    : { id: `${p}-client`, type: 'singpass-login-client', name: 'Singpass login (sandbox)', environment: 'sandbox' };
  Object.assign(client, { sandboxUrl: 'http://127.0.0.1:5156', issuer: '', clientId: 'node-red-rp', redirectUri: `http://127.0.0.1:1880${base}/callback` });
  const start = n({ id: `${p}-start`, type: nodeType, name: '', client: client.id, action: 'start', scope: cp ? 'openid authinfo' : 'openid user.identity name',
    fetchRoles: true, includeAccessToken: false, acrValues: '', requiredAcr: '', authenticationContextType: cp ? '' : 'APP_AUTHENTICATION_DEFAULT',
    authenticationContextMessage: '', x: 360, y: 100, wires: [[`${p}-redirect`]] });
  const complete = n({ id: `${p}-complete`, type: nodeType, name: '', client: client.id, action: 'complete', scope: '', fetchRoles: true, includeAccessToken: false,
    acrValues: '', requiredAcr: '', authenticationContextType: '', authenticationContextMessage: '', x: 380, y: 180, wires: [[`${p}-page`]] });
  return [
    { id: tab, type: 'tab', label: title, info:
        `${title}: open http://127.0.0.1:1880${base}/login. ` +
        (cp ? 'Shows the verified user, the entity and the roles active today (AuthInfo and TPAuthInfo). '
          : 'Shows the verified person (name, NRIC/FIN from the scope). ') +
        LOGIN_KEYS_NOTE(`http://127.0.0.1:1880${base}/jwks`, client.redirectUri) +
        ' Errors (cancelled, replayed or altered callback) go to the Catch node with msg.error.code.' },
    client,
    n({ id: `${p}-c1`, type: 'comment', name: `1. ${base}/login: redirect to ${cp ? 'Corppass' : 'Singpass'} (the login transaction rides in an HttpOnly cookie)`, x: 400, y: 60, wires: [] }),
    n({ id: `${p}-login-in`, type: 'http in', name: '', url: `${base}/login`, method: 'get', upload: false, swaggerDoc: '', x: 150, y: 100, wires: [[start.id]] }),
    start,
    n({ id: `${p}-redirect`, type: 'http response', name: 'redirect', statusCode: '', headers: {}, x: 590, y: 100, wires: [] }),
    n({ id: `${p}-c2`, type: 'comment', name: `2. ${base}/callback: verify, then show ` + (cp ? 'the user, entity and roles' : 'the person'), x: 370, y: 140, wires: [] }),
    n({ id: `${p}-callback-in`, type: 'http in', name: '', url: `${base}/callback`, method: 'get', upload: false, swaggerDoc: '', x: 160, y: 180, wires: [[complete.id]] }),
    complete,
    n({ id: `${p}-page`, type: 'template', name: 'who logged in' + (cp ? ' + roles' : ''), field: 'payload', fieldType: 'msg', format: 'html', syntax: 'mustache',
      template: page(cp ? 'corppass-login.html' : 'singpass-login.html'), output: 'str', x: 610, y: 180, wires: [[`${p}-page-out`]] }),
    n({ id: `${p}-page-out`, type: 'http response', name: '', statusCode: '', headers: HTML, x: 800, y: 180, wires: [] }),
    n({ id: `${p}-catch`, type: 'catch', name: 'login failed', scope: [start.id, complete.id], uncaught: false, x: 370, y: 240, wires: [[`${p}-error-page`]] }),
    n({ id: `${p}-error-page`, type: 'template', name: 'error page', field: 'payload', fieldType: 'msg', format: 'html', syntax: 'mustache', template: page('login-error.html'), output: 'str', x: 590, y: 240, wires: [[`${p}-error-status`]] }),
    n({ id: `${p}-error-status`, type: 'change', name: '400', rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '400', tot: 'num' },
      { t: 'delete', p: 'headers', pt: 'msg' }], x: 760, y: 240, wires: [[`${p}-page-out`]] }),
    n({ id: `${p}-c3`, type: 'comment', name: `3. ${base}/jwks: your public keys (register this URL with the provider)`, x: 330, y: 300, wires: [] }),
    n({ id: `${p}-keyset`, type: 'singpass-keyset', name: '', url: `${base}/jwks`, signClient: '', corppassClient: cp ? client.id : '',
      singpassClient: cp ? '' : client.id, x: 160, y: 340, wires: [] }),
  ];
}

/**
 * An officer signs for the company: Corppass login (FAPI 2.0; legacy works the same), then only a
 * user holding one of the configured roles for the entity they logged in for may start the signing (officer check);
 * the entity and the role go into the session record and into the document name the user sees in the app.
 */
function officer() {
  const tab = 'of-tab';
  const n = on(tab);
  const signer = (id, answer, x, y) => n({ id, type: 'singpass-signer-page', name: '', client: 'of-sign-client', answer, title: 'Sign for your company with Singpass', outputs: 1, x, y, wires: [['of-page-out']] });
  return [
    { id: tab, type: 'tab', label: 'Corppass officer signs for the company', info:
        'Open http://127.0.0.1:1880/officer/login: Corppass login; a user holding a role of the Officer check node (here ' +
        'CPF2FAR1 of e-service SD-CPF2FA, a sandbox user\'s role: put the role your e-service grants to signing officers) ' +
        'for the entity (UEN) they logged in for signs the document SINGPASS_OFFICER_DOCUMENT names, on behalf of the ' +
        'company; anyone else gets a page saying which role is needed. ' +
        LOGIN_KEYS_NOTE('http://127.0.0.1:1880/officer/jwks', 'http://127.0.0.1:1880/officer/callback') +
        ' The signing client needs its key and token secret too; register http://127.0.0.1:1880/officer/sign/webhook ' +
        'as its webhook URL and the same key set URL.' },
    { id: 'of-cp-client', type: 'corppass-client', name: 'Corppass (sandbox)', profile: 'fapi', appType: 'login', environment: 'sandbox',
      sandboxUrl: 'http://127.0.0.1:5156', issuer: '', clientId: 'node-red-rp', redirectUri: 'http://127.0.0.1:1880/officer/callback' },
    ...signConfigNodes('of', { name: 'Singpass Sign (sandbox)', environment: 'sandbox', sandboxUrl: 'http://127.0.0.1:5156',
      clientId: 'node-red-dsap', domainName: 'localhost', tenantId: 'example' }),

    n({ id: 'of-c1', type: 'comment', name: '1. /officer/login: Corppass login (the login transaction rides in an HttpOnly cookie)', x: 380, y: 40, wires: [] }),
    n({ id: 'of-login-in', type: 'http in', name: '', url: '/officer/login', method: 'get', upload: false, swaggerDoc: '', x: 140, y: 80, wires: [['of-start-login']] }),
    n({ id: 'of-start-login', type: 'corppass-login', name: '', client: 'of-cp-client', action: 'start', scope: 'openid authinfo', fetchRoles: true, includeAccessToken: false,
      acrValues: '', requiredAcr: '', authenticationContextType: '', authenticationContextMessage: '', x: 350, y: 80, wires: [['of-redirect']] }),
    n({ id: 'of-redirect', type: 'http response', name: 'redirect', statusCode: '', headers: {}, x: 560, y: 80, wires: [] }),

    n({ id: 'of-c2', type: 'comment', name: '2. /officer/callback: only an officer with the role for the entity starts the signing; anyone else gets a page saying why', x: 470, y: 130, wires: [] }),
    n({ id: 'of-callback-in', type: 'http in', name: '', url: '/officer/callback', method: 'get', upload: false, swaggerDoc: '', x: 150, y: 170, wires: [['of-complete']] }),
    n({ id: 'of-complete', type: 'corppass-login', name: '', client: 'of-cp-client', action: 'complete', scope: '', fetchRoles: true, includeAccessToken: false,
      acrValues: '', requiredAcr: '', authenticationContextType: '', authenticationContextMessage: '', x: 340, y: 170, wires: [['of-officer']] }),
    n({ id: 'of-officer', type: 'singpass-officer-check', name: '', roles: 'CPF2FAR1', eserviceId: 'SD-CPF2FA', x: 540, y: 170, wires: [['of-document'], ['of-page-out']] }),
    n({ id: 'of-document', type: 'function', name: 'document to sign', func: fn('officer-document.js'), outputs: 2, x: 730, y: 170, wires: [['of-read'], ['of-page-out']] }),
    n({ id: 'of-read', type: 'file in', name: 'read PDF', filename: 'filename', filenameType: 'msg', format: '', chunk: false, sendError: false, encoding: 'none', allProps: false, x: 900, y: 170, wires: [['of-start']] }),
    n({ id: 'of-start', type: 'singpass-sign-start', name: 'start signing (for the company)', client: 'of-sign-client', documentName: '', level: 'B-LTA', reason: 'Signed for the company with Singpass', location: '', box: 'corner', boxPage: 'last', boxCorner: 'bottom-right', boxRect: '', boxField: '', boxSize: '', x: 1110, y: 170, wires: [['of-to-page']] }),
    n({ id: 'of-to-page', type: 'change', name: 'to the signer page', rules: [
      { t: 'set', p: 'statusCode', pt: 'msg', to: '303', tot: 'num' },
      { t: 'set', p: 'headers', pt: 'msg', to: '{"location": "s/" & $encodeUrlComponent(signRef) & "?link=" & $encodeUrlComponent(signerLink.token), "cache-control": "no-store"}', tot: 'jsonata' },
      { t: 'set', p: 'payload', pt: 'msg', to: '', tot: 'str' }], x: 1320, y: 170, wires: [['of-page-out']] }),
    n({ id: 'of-page-out', type: 'http response', name: '', statusCode: '', headers: {}, x: 1320, y: 260, wires: [] }),
    n({ id: 'of-catch', type: 'catch', name: 'login or start failed', scope: ['of-complete', 'of-start', 'of-read'], uncaught: false, x: 360, y: 230, wires: [['of-error-page']] }),
    n({ id: 'of-error-page', type: 'template', name: 'error page', field: 'payload', fieldType: 'msg', format: 'html', syntax: 'mustache', template: page('login-error.html'), output: 'str', x: 560, y: 230, wires: [['of-error-status']] }),
    n({ id: 'of-error-status', type: 'change', name: '400', rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '400', tot: 'num' },
      { t: 'set', p: 'headers', pt: 'msg', to: '{"content-type": "text/html; charset=utf-8"}', tot: 'json' }], x: 730, y: 230, wires: [['of-page-out']] }),

    n({ id: 'of-c3', type: 'comment', name: '3. The officer\'s signer page (its link opens it): QR code, progress, signed PDF', x: 370, y: 320, wires: [] }),
    n({ id: 'of-s-in', type: 'http in', name: '', url: '/officer/s/:signRef', method: 'get', upload: false, swaggerDoc: '', x: 160, y: 360, wires: [['of-s-page']] }),
    signer('of-s-page', 'page', 400, 360),
    n({ id: 'of-status-in', type: 'http in', name: '', url: '/officer/s/:signRef/status', method: 'get', upload: false, swaggerDoc: '', x: 170, y: 410, wires: [['of-s-status']] }),
    signer('of-s-status', 'status', 400, 410),
    n({ id: 'of-signed-in', type: 'http in', name: '', url: '/officer/s/:signRef/signed.pdf', method: 'get', upload: false, swaggerDoc: '', x: 180, y: 460, wires: [['of-s-signed']] }),
    signer('of-s-signed', 'download', 400, 460),

    n({ id: 'of-c4', type: 'comment', name: '4. The signing service calls the webhook: certificate \u2192 check \u2192 hash; signature \u2192 signed PDF (kept in the session store)', x: 470, y: 520, wires: [] }),
    n({ id: 'of-webhook', type: 'singpass-sign-webhook', name: '', client: 'of-sign-client', url: '/officer/sign/webhook', x: 170, y: 580, wires: [['of-on-cert'], ['of-on-sig'], ['of-on-error'], ['of-file-name']] }),
    n({ id: 'of-on-cert', type: 'singpass-sign-apply', name: 'certificate: check status (OCSP) \u2192 prepare \u2192 submit hash', client: 'of-sign-client', x: 540, y: 560, wires: [[]] }),
    n({ id: 'of-on-sig', type: 'singpass-sign-apply', name: 'signature received', client: 'of-sign-client', x: 450, y: 610, wires: [['of-finish']] }),
    n({ id: 'of-finish', type: 'singpass-sign-finish', name: 'finalize \u2192 validation data \u2192 document timestamp \u2192 verify', client: 'of-sign-client', x: 800, y: 610, wires: [['of-file-name']] }),
    n({ id: 'of-on-error', type: 'singpass-sign-apply', name: 'session failed', client: 'of-sign-client', x: 430, y: 660, wires: [[]] }),
    ...storeAndAcknowledge(n, 'of', 'of-sign-client', 240, 710, [], []),
    n({ id: 'of-keyset', type: 'singpass-keyset', name: '', url: '/officer/jwks', signClient: 'of-sign-client', corppassClient: 'of-cp-client', singpassClient: '', x: 160, y: 800, wires: [] }),
  ];
}

/**
 * Several signers in order: signer 1 signs, then signer 2 signs signer 1's signed PDF, each on a signer page of their
 * own. A signer who declines or lets the session expire ends the chain there; what was signed before stays signed.
 */
function severalSigners() {
  const tab = 'ms-tab';
  const n = on(tab);
  const signer = (id, answer, x, y) => n({ id, type: 'singpass-signer-page', name: '', client: 'ms-sign-client', answer, title: '', outputs: 1, x, y, wires: [['ms-out']] });
  return [
    { id: tab, type: 'tab', label: 'Singpass several signers in order', info:
        'POST http://127.0.0.1:1880/signers/start?name=<file name> with the PDF (signed-in users only: SINGPASS_SIGN_USER / ' +
        'SINGPASS_SIGN_PASSWORD, as in the document-signing example) starts signer 1 (Landlord) and answers their page link. ' +
        'When signer 1 has signed, signer 2 (Tenant) gets a session of their own over signer 1\'s signed PDF; their page ' +
        'link goes to handovers.jsonl in $SINGPASS_SIGNED_DIR (put your email node there). The last signed PDF carries both ' +
        'signatures. If signer 2 declines or lets the session expire, the chain stops: signer 1\'s signed PDF stays ' +
        'available (their page, $SINGPASS_SIGNED_DIR) and errors.jsonl says why. Register ' +
        'http://127.0.0.1:1880/signers/sign/webhook as the webhook and http://127.0.0.1:1880/signers/jwks as the key set.' },
    ...signConfigNodes('ms', { name: 'Singpass Sign (sandbox)', environment: 'sandbox', sandboxUrl: 'http://127.0.0.1:5156',
      clientId: 'node-red-dsap', domainName: 'localhost', tenantId: 'example' }),

    n({ id: 'ms-c1', type: 'comment', name: '1. A signed-in user starts the chain: signer 1\'s session and page link', x: 350, y: 40, wires: [] }),
    n({ id: 'ms-start-in', type: 'http in', name: '', url: '/signers/start', method: 'post', upload: false, swaggerDoc: '', x: 150, y: 80, wires: [['ms-auth']] }),
    n({ id: 'ms-auth', type: 'function', name: 'sign-in check', func: fn('sign-in-check.js'), outputs: 2, x: 330, y: 80, wires: [['ms-first'], ['ms-out']] }),
    n({ id: 'ms-first', type: 'function', name: 'signer 1 of 2', func: SIGNERS_JS + fn('first-signer.js'), outputs: 1, x: 500, y: 80, wires: [['ms-start']] }),
    n({ id: 'ms-start', type: 'singpass-sign-start', name: 'start signing', client: 'ms-sign-client', documentName: '', level: 'B-LTA', reason: 'Signed with Singpass', location: '', box: 'corner', boxPage: 'last', boxCorner: 'bottom-right', boxRect: '', boxField: '', boxSize: '', x: 670, y: 80, wires: [['ms-started']] }),
    n({ id: 'ms-started', type: 'change', name: 'signer 1\'s page link', rules: [{ t: 'set', p: 'payload', pt: 'msg',
      to: '{"signRef": signRef, "signer": session.request.signer, "page": "signers/s/" & $encodeUrlComponent(signRef) & "?link=" & $encodeUrlComponent(signerLink.token)}', tot: 'jsonata' },
      { t: 'set', p: 'headers', pt: 'msg', to: '{"cache-control": "no-store"}', tot: 'json' }], x: 860, y: 80, wires: [['ms-out']] }),
    n({ id: 'ms-start-catch', type: 'catch', name: 'start failed', scope: ['ms-start'], uncaught: false, x: 670, y: 130, wires: [['ms-start-error']] }),
    n({ id: 'ms-start-error', type: 'change', name: 'error answer', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '{"code": error.code, "message": error.message, "serviceCode": serviceCode}', tot: 'jsonata' },
      { t: 'set', p: 'statusCode', pt: 'msg', to: '400', tot: 'num' }], x: 860, y: 130, wires: [['ms-out']] }),
    n({ id: 'ms-out', type: 'http response', name: '', statusCode: '', headers: {}, x: 1060, y: 130, wires: [] }),

    n({ id: 'ms-c2', type: 'comment', name: '2. Each signer\'s page (its link opens it): QR code, progress, their signed PDF', x: 370, y: 190, wires: [] }),
    n({ id: 'ms-s-in', type: 'http in', name: '', url: '/signers/s/:signRef', method: 'get', upload: false, swaggerDoc: '', x: 160, y: 230, wires: [['ms-s-page']] }),
    signer('ms-s-page', 'page', 400, 230),
    n({ id: 'ms-status-in', type: 'http in', name: '', url: '/signers/s/:signRef/status', method: 'get', upload: false, swaggerDoc: '', x: 170, y: 280, wires: [['ms-s-status']] }),
    signer('ms-s-status', 'status', 400, 280),
    n({ id: 'ms-signed-in', type: 'http in', name: '', url: '/signers/s/:signRef/signed.pdf', method: 'get', upload: false, swaggerDoc: '', x: 180, y: 330, wires: [['ms-s-signed']] }),
    signer('ms-s-signed', 'download', 400, 330),

    n({ id: 'ms-c3', type: 'comment', name: '3. The webhook: certificate \u2192 hash; signature \u2192 signed PDF \u2192 written, acknowledged \u2192 the next signer signs it', x: 440, y: 390, wires: [] }),
    n({ id: 'ms-webhook', type: 'singpass-sign-webhook', name: '', client: 'ms-sign-client', url: '/signers/sign/webhook', x: 170, y: 450, wires: [['ms-on-cert'], ['ms-on-sig'], ['ms-on-error'], ['ms-file-name']] }),
    n({ id: 'ms-on-cert', type: 'singpass-sign-apply', name: 'certificate: check status (OCSP) \u2192 prepare \u2192 submit hash', client: 'ms-sign-client', x: 540, y: 430, wires: [[]] }),
    n({ id: 'ms-on-sig', type: 'singpass-sign-apply', name: 'signature received', client: 'ms-sign-client', x: 450, y: 480, wires: [['ms-finish']] }),
    n({ id: 'ms-finish', type: 'singpass-sign-finish', name: 'finalize \u2192 validation data \u2192 document timestamp \u2192 verify', client: 'ms-sign-client', x: 800, y: 480, wires: [['ms-file-name']] }),
    ...storeAndAcknowledge(n, 'ms', 'ms-sign-client', 240, 540, ['ms-next'], ['ms-error-line']),
    n({ id: 'ms-next', type: 'function', name: 'next signer?', func: SIGNERS_JS + fn('next-signer.js'), outputs: 2, x: 450, y: 620, wires: [['ms-start-next'], []] }),
    n({ id: 'ms-start-next', type: 'singpass-sign-start', name: 'start signing (next signer)', client: 'ms-sign-client', documentName: '', level: 'B-LTA', reason: 'Signed with Singpass', location: '', box: 'corner', boxPage: 'last', boxCorner: 'bottom-right', boxRect: '', boxField: '', boxSize: '', x: 670, y: 620, wires: [['ms-hand-over']] }),
    n({ id: 'ms-hand-over', type: 'function', name: 'hand the page link over', func: fn('hand-over.js'), outputs: 1, x: 890, y: 620, wires: [['ms-handovers']] }),
    n({ id: 'ms-handovers', type: 'file', name: 'handovers.jsonl', filename: 'filename', filenameType: 'msg', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 1080, y: 620, wires: [[]] }),

    n({ id: 'ms-c4', type: 'comment', name: '4. A session failed (declined, expired, \u2026): the chain stops there \u2192 errors.jsonl', x: 370, y: 660, wires: [] }),
    n({ id: 'ms-on-error', type: 'singpass-sign-apply', name: 'session failed', client: 'ms-sign-client', x: 430, y: 700, wires: [['ms-error-line']] }),
    n({ id: 'ms-catch', type: 'catch', name: 'signing errors', scope: ['ms-on-cert', 'ms-on-sig', 'ms-finish', 'ms-stored', 'ms-start-next', 'ms-webhook'], uncaught: false, x: 420, y: 750, wires: [['ms-error-line']] }),
    n({ id: 'ms-error-line', type: 'change', name: 'error line', rules: [
      { t: 'set', p: 'payload', pt: 'msg', to: '$string({"signRef": signRef, "signer": session.request.signer, "code": error.code ? error.code : session.error.code, "message": error.message ? error.message : session.error.message, "serviceCode": session.error ? session.error.serviceCode : session.state.error.code, "at": $now()})', tot: 'jsonata' },
      { t: 'set', p: 'filename', pt: 'msg', to: SIGNED_DIR + ' & "/errors.jsonl"', tot: 'jsonata' }], x: 640, y: 720, wires: [['ms-error-record']] }),
    n({ id: 'ms-error-record', type: 'file', name: 'record error', filename: 'filename', filenameType: 'msg', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 830, y: 720, wires: [[]] }),
    n({ id: 'ms-keyset', type: 'singpass-keyset', name: '', url: '/signers/jwks', signClient: 'ms-sign-client', corppassClient: '', singpassClient: '', x: 160, y: 800, wires: [] }),
  ];
}

/** One key-set URL publishing the public keys of a signing client and both login clients. */
function keySet() {
  const tab = 'ks-tab';
  const n = on(tab);
  return [
    { id: tab, type: 'tab', label: 'Singpass key set endpoint', info:
        'GET http://127.0.0.1:1880/jwks serves the PUBLIC keys of the config nodes chosen in the key set node (private parts ' +
        'never leave Node-RED; duplicate key IDs are refused). Register this URL as your JWKS URL with the signing ' +
        'service, Corppass and Singpass. Paste your private keys into the config nodes first.' },
    ...signConfigNodes('ks', { name: 'Singpass Sign' }),
    { id: 'ks-cp-client', type: 'corppass-client', name: 'Corppass', environment: 'staging', sandboxUrl: '', issuer: '', clientId: '', redirectUri: '' },
    { id: 'ks-sp-client', type: 'singpass-login-client', name: 'Singpass login', environment: 'staging', sandboxUrl: '', issuer: '', clientId: '', redirectUri: '' },
    n({ id: 'ks-c1', type: 'comment', name: 'Your public key set: one URL for the signing service, Corppass and Singpass', x: 330, y: 60, wires: [] }),
    n({ id: 'ks-keyset', type: 'singpass-keyset', name: '', url: '/jwks', signClient: 'ks-sign-client', corppassClient: 'ks-cp-client',
      singpassClient: 'ks-sp-client', x: 140, y: 100, wires: [] }),
  ];
}

/**
 * A flow as the committed files have always been written: two-space JSON, one final newline, every character outside
 * printable ASCII as a \uXXXX escape (→, —, … in names and pages), so the files are plain ASCII whatever opens them.
 */
function toJson(flow) {
  const text = JSON.stringify(flow, null, 2) + '\n';
  // JSON.stringify leaves raw newlines only between tokens, never inside a string: every other one is escaped here.
  return text.replace(/[^\n\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function main(argv) {
  const usage = 'usage: node scripts/make-node-red-examples.js [--out <dir>]  (default: examples/)';
  let out = path.join(__dirname, '..', 'examples');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = path.resolve(argv[++i]);
    else {
      console.error(usage);
      process.exit(2);
    }
  }
  const examples = {
    'singpass-document-signing.json': addSigningPage(signing()),
    'corppass-login-with-roles.json': login('corppass'),
    'singpass-login.json': login('singpass'),
    'key-set-endpoint.json': keySet(),
    'corppass-officer-signing.json': officer(),
    'several-signers.json': severalSigners(),
  };
  fs.mkdirSync(out, { recursive: true });
  for (const [name, flow] of Object.entries(examples)) fs.writeFileSync(path.join(out, name), toJson(flow));
}

main(process.argv.slice(2));
