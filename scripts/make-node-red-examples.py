#!/usr/bin/env python3
# Writes examples/*.json (Node-RED Import > Examples). Kept as a generator so the flows stay readable in review;
# run it after changing a flow: python3 scripts/make-node-red-examples.py
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'examples')
SIGNED_DIR = '($d := $env("SINGPASS_SIGNED_DIR"); $d ? $d : "signed")'

PAGE = r'''<!doctype html>
<html><head><meta charset="utf-8"><title>Sign a PDF with Singpass</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}#code{font-size:2em;letter-spacing:.2em}</style></head>
<body><h1>Sign a PDF with Singpass</h1>
<p><input type="file" id="file" accept="application/pdf"> <button id="go">Start signing</button></p>
<div id="out"></div>
<script>
document.getElementById('go').onclick = async function () {
  var f = document.getElementById('file').files[0], out = document.getElementById('out');
  if (!f) { out.textContent = 'Choose a PDF first.'; return; }
  out.textContent = 'Creating the signing session…';
  var r = await fetch('sign/start?name=' + encodeURIComponent(f.name), { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: f });
  var j = await r.json();
  if (!r.ok) { out.textContent = (j.code || 'ERROR') + ': ' + j.message; return; }
  out.innerHTML = '<p>Scan with the Singpass app:</p><img alt="QR code" src="' + j.qr + '">' +
    '<p>Check that the app shows this challenge code:</p><p id="code">' + j.challengeCode + '</p>' +
    '<p>Session <code>' + j.signRef + '</code>, expires ' + new Date(j.expiresAt * 1000).toLocaleTimeString() + '.</p>';
};
</script></body></html>'''


def signing():
    tab = 'sf-sign-tab'
    n = lambda **kw: {'z': tab, **kw}
    return [
        {'id': tab, 'type': 'tab', 'label': 'Singpass document signing', 'info':
            'Sign a PDF end to end. Needs contextStorage with localfilesystem in settings.js (see the README), '
            'the signing key and token secret pasted into the config nodes, and the sandbox '
            '(npx singpass-flows sandbox --client-id node-red-dsap --jwks-url http://127.0.0.1:1880/singpass/jwks '
            '--webhook-url http://127.0.0.1:1880/singpass/sign/webhook) or your onboarded environment. '
            'Signed PDFs and results.jsonl / errors.jsonl go to $SINGPASS_SIGNED_DIR (default ./signed).'},
        {'id': 'sf-secret', 'type': 'singpass-notification-secret', 'name': 'webhook token secret'},
        {'id': 'sf-sign-client', 'type': 'singpass-sign-client', 'name': 'Singpass Sign (sandbox)', 'environment': 'sandbox',
         'sandboxUrl': 'http://127.0.0.1:5156', 'baseUrl': '', 'keySetUrl': '', 'clientId': 'node-red-dsap',
         'domainName': 'localhost', 'tenantId': 'example', 'tsaUrl': '', 'trustedRoots': '', 'notificationSecret': 'sf-secret',
         'contextStore': '', 'documentDir': ''},

        n(id='sf-c1', type='comment', name='1. The signing page: upload a PDF, show the QR code and the challenge code', x=330, y=40, wires=[]),
        n(id='sf-page-in', type='http in', name='', url='/sign', method='get', upload=False, swaggerDoc='', x=130, y=80, wires=[['sf-page']]),
        n(id='sf-page', type='template', name='signing page', field='payload', fieldType='msg', format='html', syntax='plain', template=PAGE, output='str', x=330, y=80, wires=[['sf-page-out']]),
        n(id='sf-page-out', type='http response', name='', statusCode='', headers={'content-type': 'text/html; charset=utf-8'}, x=530, y=80, wires=[]),

        n(id='sf-start-in', type='http in', name='', url='/sign/start', method='post', upload=False, swaggerDoc='', x=150, y=140, wires=[['sf-name']]),
        n(id='sf-name', type='change', name='document name', rules=[{'t': 'set', 'p': 'documentName', 'pt': 'msg', 'to': 'req.query.name', 'tot': 'msg'}], x=350, y=140, wires=[['sf-start']]),
        n(id='sf-start', type='singpass-sign-start', name='start signing', client='sf-sign-client', documentName='', level='B-LTA', reason='Signed with Singpass', location='', x=550, y=140, wires=[['sf-started']]),
        n(id='sf-started', type='change', name='QR + challenge code', rules=[{'t': 'set', 'p': 'payload', 'pt': 'msg',
            'to': '{"signRef": signRef, "challengeCode": challengeCode, "expiresAt": expiresAt, "qr": qr.dataUrl}', 'tot': 'jsonata'}], x=760, y=140, wires=[['sf-start-out']]),
        n(id='sf-start-out', type='http response', name='', statusCode='', headers={}, x=950, y=140, wires=[]),
        n(id='sf-start-catch', type='catch', name='start failed', scope=['sf-start'], uncaught=False, x=550, y=190, wires=[['sf-start-error']]),
        n(id='sf-start-error', type='change', name='error answer', rules=[
            {'t': 'set', 'p': 'payload', 'pt': 'msg', 'to': '{"code": error.code, "message": error.message}', 'tot': 'jsonata'},
            {'t': 'set', 'p': 'statusCode', 'pt': 'msg', 'to': '400', 'tot': 'num'}], x=760, y=190, wires=[['sf-start-out']]),

        n(id='sf-c2', type='comment', name='2. The signing service calls the webhook: certificate → check → hash; signature → signed PDF', x=390, y=260, wires=[]),
        n(id='sf-webhook', type='singpass-sign-webhook', name='', client='sf-sign-client', url='/singpass/sign/webhook', x=160, y=340, wires=[['sf-on-cert'], ['sf-on-sig'], ['sf-on-error']]),
        n(id='sf-on-cert', type='singpass-sign-apply', name='certificate: check status (OCSP) → prepare → submit hash', client='sf-sign-client', x=530, y=300, wires=[[]]),
        n(id='sf-on-sig', type='singpass-sign-apply', name='signature received', client='sf-sign-client', x=440, y=350, wires=[['sf-finish']]),
        n(id='sf-finish', type='singpass-sign-finish', name='finalize → validation data → document timestamp → verify', client='sf-sign-client', x=790, y=350, wires=[['sf-file-name']]),
        n(id='sf-file-name', type='change', name='signed/<signRef>.pdf', rules=[{'t': 'set', 'p': 'filename', 'pt': 'msg',
            'to': SIGNED_DIR + ' & "/" & signRef & ".pdf"', 'tot': 'jsonata'}], x=230, y=420, wires=[['sf-write']]),
        n(id='sf-write', type='file', name='write signed PDF', filename='filename', filenameType='msg', appendNewline=False, createDir=True, overwriteFile='true', encoding='none', x=440, y=420, wires=[['sf-result']]),
        n(id='sf-result', type='change', name='result line', rules=[
            {'t': 'set', 'p': 'payload', 'pt': 'msg', 'to': '$string({"signRef": signRef, "status": session.state.status, "level": session.result.level, "valid": verification.valid, "file": filename, "at": $now()})', 'tot': 'jsonata'},
            {'t': 'set', 'p': 'filename', 'pt': 'msg', 'to': SIGNED_DIR + ' & "/results.jsonl"', 'tot': 'jsonata'}], x=630, y=420, wires=[['sf-record']]),
        n(id='sf-record', type='file', name='record result', filename='filename', filenameType='msg', appendNewline=True, createDir=True, overwriteFile='false', encoding='utf8', x=810, y=420, wires=[[]]),

        n(id='sf-c3', type='comment', name='3. Errors: the session failed (declined, revoked certificate, …) → errors.jsonl', x=360, y=490, wires=[]),
        n(id='sf-on-error', type='singpass-sign-apply', name='session failed', client='sf-sign-client', x=430, y=530, wires=[['sf-error-line']]),
        n(id='sf-catch', type='catch', name='signing errors', scope=['sf-on-cert', 'sf-on-sig', 'sf-finish', 'sf-write', 'sf-webhook'], uncaught=False, x=420, y=580, wires=[['sf-error-line']]),
        n(id='sf-error-line', type='change', name='error line', rules=[
            {'t': 'set', 'p': 'payload', 'pt': 'msg', 'to': '$string({"signRef": signRef, "code": error.code ? error.code : session.error.code, "message": error.message ? error.message : session.error.message, "serviceCode": session.state.error.code, "at": $now()})', 'tot': 'jsonata'},
            {'t': 'set', 'p': 'filename', 'pt': 'msg', 'to': SIGNED_DIR + ' & "/errors.jsonl"', 'tot': 'jsonata'}], x=640, y=550, wires=[['sf-error-record']]),
        n(id='sf-error-record', type='file', name='record error', filename='filename', filenameType='msg', appendNewline=True, createDir=True, overwriteFile='false', encoding='utf8', x=830, y=550, wires=[[]]),

        n(id='sf-c4', type='comment', name='4. Your public key set (register this URL as your JWKS URL)', x=300, y=650, wires=[]),
        n(id='sf-keyset', type='singpass-keyset', name='', url='/singpass/jwks', signClient='sf-sign-client', corppassClient='', singpassClient='', x=150, y=690, wires=[]),
    ]


LOGIN_KEYS_NOTE = ('Paste your private signing and encryption keys (JWK or PEM; `npx singpass-flows keys` makes a pair) '
                   'and a transaction secret of 32+ characters into the client config node, and register '
                   '{jwks} as your key set URL and {callback} as your redirect URI with the provider.')

CORPPASS_PAGE = r"""<!doctype html>
<html><head><meta charset="utf-8"><title>Logged in with Corppass</title>
<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}td,th{border-bottom:1px solid #ccc;padding:.2em .6em;text-align:left}</style></head>
<body><h1>Logged in with Corppass</h1>
<p>User <b>{{payload.userInfo.CPUID_FullName}}</b> ({{payload.subject.uuid}}) of entity <b>{{payload.entityInfo.CPEntID}}</b>.</p>
<h2>Roles active today</h2>
<table id="roles"><tr><th>Source</th><th>e-Service</th><th>Role</th><th>Acting for</th><th>Until</th></tr>
{{#payload.activeRoles}}<tr><td>{{source}}</td><td>{{eserviceId}}</td><td>{{role}}</td><td>{{clientId}}</td><td>{{endDate}}</td></tr>
{{/payload.activeRoles}}</table>
<p><a href="login">Log in again</a></p></body></html>"""

SINGPASS_PAGE = r"""<!doctype html>
<html><head><meta charset="utf-8"><title>Logged in with Singpass</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}</style></head>
<body><h1>Logged in with Singpass</h1>
<p id="who">Welcome, <b>{{payload.subAttributes.name}}</b> ({{payload.subAttributes.identity_number}}).</p>
<p>Singpass user id <code>{{payload.sub}}</code>, level of assurance <code>{{payload.acr}}</code>.</p>
<p><a href="login">Log in again</a></p></body></html>"""

ERROR_PAGE = r"""<!doctype html><html><head><meta charset="utf-8"><title>Login failed</title></head>
<body style="font-family:sans-serif"><h1>Login failed</h1><p><code>{{error.code}}</code>: {{error.message}}</p><p><a href="login">Try again</a></p></body></html>"""


def login(provider):
    """Corppass (with roles) or Singpass login: /<base>/login redirects, /<base>/callback shows who logged in."""
    cp = provider == 'corppass'
    p = 'cp' if cp else 'sp'
    base = '/corppass' if cp else '/singpass-login'
    tab = f'{p}-login-tab'
    n = lambda **kw: {'z': tab, **kw}
    client_type = 'corppass-client' if cp else 'singpass-login-client'
    node_type = 'corppass-login' if cp else 'singpass-login'
    title = 'Corppass login with roles' if cp else 'Singpass login'
    client = {'id': f'{p}-client', 'type': client_type, 'name': f'{"Corppass" if cp else "Singpass login"} (sandbox)', 'environment': 'sandbox',
              'sandboxUrl': 'http://127.0.0.1:5156', 'issuer': '', 'clientId': 'node-red-rp', 'redirectUri': f'http://127.0.0.1:1880{base}/callback'}
    start = n(id=f'{p}-start', type=node_type, name='', client=client['id'], action='start', scope='openid' if cp else 'openid user.identity name',
              fetchRoles=True, includeAccessToken=False, acrValues='', requiredAcr='', authenticationContextType='' if cp else 'APP_AUTHENTICATION_DEFAULT',
              authenticationContextMessage='', x=360, y=100, wires=[[f'{p}-redirect']])
    complete = n(id=f'{p}-complete', type=node_type, name='', client=client['id'], action='complete', scope='', fetchRoles=True, includeAccessToken=False,
                 acrValues='', requiredAcr='', authenticationContextType='', authenticationContextMessage='', x=380, y=180, wires=[[f'{p}-page']])
    return [
        {'id': tab, 'type': 'tab', 'label': title, 'info': (
            f'{title}: open http://127.0.0.1:1880{base}/login. ' +
            ('Shows the verified user, the entity and the roles active today (AuthInfo and TPAuthInfo). ' if cp else
             'Shows the verified person (name, NRIC/FIN from the scope). ') +
            LOGIN_KEYS_NOTE.format(jwks=f'http://127.0.0.1:1880{base}/jwks', callback=client['redirectUri']) +
            ' Errors (cancelled, replayed or altered callback) go to the Catch node with msg.error.code.')},
        client,
        n(id=f'{p}-c1', type='comment', name=f'1. {base}/login: redirect to {"Corppass" if cp else "Singpass"} (the login transaction rides in an HttpOnly cookie)', x=400, y=60, wires=[]),
        n(id=f'{p}-login-in', type='http in', name='', url=f'{base}/login', method='get', upload=False, swaggerDoc='', x=150, y=100, wires=[[start['id']]]),
        start,
        n(id=f'{p}-redirect', type='http response', name='redirect', statusCode='', headers={}, x=590, y=100, wires=[]),
        n(id=f'{p}-c2', type='comment', name=f'2. {base}/callback: verify, then show ' + ('the user, entity and roles' if cp else 'the person'), x=370, y=140, wires=[]),
        n(id=f'{p}-callback-in', type='http in', name='', url=f'{base}/callback', method='get', upload=False, swaggerDoc='', x=160, y=180, wires=[[complete['id']]]),
        complete,
        n(id=f'{p}-page', type='template', name='who logged in' + (' + roles' if cp else ''), field='payload', fieldType='msg', format='html', syntax='mustache',
          template=CORPPASS_PAGE if cp else SINGPASS_PAGE, output='str', x=610, y=180, wires=[[f'{p}-page-out']]),
        n(id=f'{p}-page-out', type='http response', name='', statusCode='', headers={'content-type': 'text/html; charset=utf-8'}, x=800, y=180, wires=[]),
        n(id=f'{p}-catch', type='catch', name='login failed', scope=[start['id'], complete['id']], uncaught=False, x=370, y=240, wires=[[f'{p}-error-page']]),
        n(id=f'{p}-error-page', type='template', name='error page', field='payload', fieldType='msg', format='html', syntax='mustache', template=ERROR_PAGE, output='str', x=590, y=240, wires=[[f'{p}-error-status']]),
        n(id=f'{p}-error-status', type='change', name='400', rules=[{'t': 'set', 'p': 'statusCode', 'pt': 'msg', 'to': '400', 'tot': 'num'},
                                                                   {'t': 'delete', 'p': 'headers', 'pt': 'msg'}], x=760, y=240, wires=[[f'{p}-page-out']]),
        n(id=f'{p}-c3', type='comment', name=f'3. {base}/jwks: your public keys (register this URL with the provider)', x=330, y=300, wires=[]),
        n(id=f'{p}-keyset', type='singpass-keyset', name='', url=f'{base}/jwks', signClient='', corppassClient=client['id'] if cp else '',
          singpassClient='' if cp else client['id'], x=160, y=340, wires=[]),
    ]


def key_set():
    """One key-set URL publishing the public keys of a signing client and both login clients."""
    tab = 'ks-tab'
    return [
        {'id': tab, 'type': 'tab', 'label': 'Singpass key set endpoint', 'info':
            'GET http://127.0.0.1:1880/jwks serves the PUBLIC keys of the config nodes chosen in the key set node (private parts '
            'never leave Node-RED; duplicate key IDs are refused). Register this URL as your JWKS URL with the signing '
            'service, Corppass and Singpass. Paste your private keys into the config nodes first.'},
        {'id': 'ks-secret', 'type': 'singpass-notification-secret', 'name': 'webhook token secret'},
        {'id': 'ks-sign-client', 'type': 'singpass-sign-client', 'name': 'Singpass Sign', 'environment': 'staging', 'sandboxUrl': '', 'baseUrl': '',
         'keySetUrl': '', 'clientId': '', 'domainName': '', 'tenantId': '', 'tsaUrl': '', 'trustedRoots': '', 'notificationSecret': 'ks-secret',
         'contextStore': '', 'documentDir': ''},
        {'id': 'ks-cp-client', 'type': 'corppass-client', 'name': 'Corppass', 'environment': 'staging', 'sandboxUrl': '', 'issuer': '', 'clientId': '', 'redirectUri': ''},
        {'id': 'ks-sp-client', 'type': 'singpass-login-client', 'name': 'Singpass login', 'environment': 'staging', 'sandboxUrl': '', 'issuer': '', 'clientId': '', 'redirectUri': ''},
        {'z': tab, 'id': 'ks-c1', 'type': 'comment', 'name': 'Your public key set: one URL for the signing service, Corppass and Singpass', 'x': 330, 'y': 60, 'wires': []},
        {'z': tab, 'id': 'ks-keyset', 'type': 'singpass-keyset', 'name': '', 'url': '/jwks', 'signClient': 'ks-sign-client', 'corppassClient': 'ks-cp-client',
         'singpassClient': 'ks-sp-client', 'x': 140, 'y': 100, 'wires': []},
    ]


def write(name, flow):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), 'w') as f:
        json.dump(flow, f, indent=2)
        f.write('\n')


from node_red_signing_page import add_signing_page  # the page's live progress, samples, download, report

write('singpass-document-signing.json', add_signing_page(signing()))
write('corppass-login-with-roles.json', login('corppass'))
write('singpass-login.json', login('singpass'))
write('key-set-endpoint.json', key_set())
