# The signing page of the document-signing example (the demo page), added to the flow make-node-red-examples.py builds:
# pick a sample PDF or upload one, follow the session live, download the signed PDF, read its verification report.
# Kept apart from the signing flow itself: it only adds nodes (ids sf-p-*), replaces the page template and adds
# wires from the signing nodes' outputs to the progress recorder. The HTML lives in scripts/node-red-examples/.
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = ['tenancy-agreement.pdf', 'consent-form.pdf']


def _read(name):
    with open(os.path.join(HERE, 'node-red-examples', name)) as f:
        return f.read()


# Function nodes: remember where each session is (flow context, one key per session and step: no read-modify-write,
# so two outputs firing together cannot lose a step) and read it back for the page's routes.
RECORD = r'''// Where each session is, for the signing page (GET /sign/status/:signRef): fed by the signing nodes' outputs, and
// by a Status node on the finish node, whose steps name the session by its short sign_ref ("AbCdEfGh… <step>").
const key = (ref, part) => 'signingPage_' + ref.replace(/[^A-Za-z0-9_-]/g, '_') + '_' + part;
const save = (ref, part, value) => flow.set(key(ref, part), Object.assign({ at: Date.now() }, value), (err) => (err ? node.error(err, msg) : node.done()));
if (msg.status && msg.status.source) {
    const m = /^([^\s\u2026]+)\u2026? (signature embedded|validation data added|document timestamp added)/.exec(msg.status.text || '');
    if (!m) return null;
    const part = { 'signature embedded': 'timestamped', 'validation data added': 'validation', 'document timestamp added': 'archived' }[m[2]];
    save('live_' + m[1], part, {});
    return null;
}
const ref = msg.signRef;
if (typeof ref !== 'string' || !ref) return null;
const NOTES = {
    NOT_COVERING_WHOLE_FILE: 'validation data and a document timestamp were appended after it (expected for B-LT/B-LTA)',
    REVOCATION_DATA_MISSING: 'no OCSP answer for every certificate embedded',
};
const ev = msg.event && msg.event.type;
const session = msg.session;
let part, value;
if (msg.error || (session && session.error)) {
    const e = msg.error || session.error;
    part = 'failed';
    value = { code: e.code || (session && session.error && session.error.code) || 'ERROR', message: String(e.message).replace(/^SingpassFlowsError: /, '') };
} else if (msg.verification && msg.filename) {
    const r = msg.verification;
    const ours = r.signatures.filter((s) => s.type === 'signature').pop();
    const docTs = r.signatures.filter((s) => s.type === 'docTimestamp');
    part = 'result';
    value = {
        valid: r.valid, level: r.level, file: msg.filename,
        steps: { timestamped: Boolean(ours && ours.timestampTime), validation: r.dss.ocsps > 0, archived: docTs.length > 0, verified: true },
        details: {
            timestamped: ours && ours.timestampTime ? 'TSA time ' + ours.timestampTime : 'no signature timestamp',
            validation: r.dss.certs + ' certificates, ' + r.dss.ocsps + ' OCSP responses in the PDF',
            archived: docTs.length ? docTs[docTs.length - 1].timestampTime : 'not asked for',
            verified: (r.valid ? 'valid, PAdES ' + r.level : 'NOT valid') + ' — saved as ' + msg.filename,
        },
        report: {
            valid: r.valid, level: r.level, dss: r.dss,
            signatures: r.signatures.map((s) => ({
                kind: s.type === 'docTimestamp' ? 'Document timestamp' : 'Signature',
                field: s.fieldName,
                signerLabel: s.type === 'docTimestamp' ? 'Timestamp authority' : 'Signer',
                signer: s.signer ? s.signer.subject : '(unknown)',
                serial: s.signer ? s.signer.serialNumber : '',
                time: s.timestampTime || s.claimedSigningTime || '',
                timeSource: s.timestampTime ? '(trusted time from a timestamp)' : '(claimed by the signer, not proven)',
                level: s.level || (s.type === 'docTimestamp' ? 'archive timestamp' : 'none'),
                integrity: s.integrity.digestMatches && s.integrity.signatureValid ? 'intact: the signed bytes are unchanged and the signature verifies' : 'BROKEN',
                chain: s.chain.subjects,
                trust: s.chain.trusted ? 'trusted (ends at a trusted root)' : 'NOT trusted',
                revocation: s.revocationDataComplete ? 'embedded: an OCSP answer for every certificate of the chain' : 'not embedded for every certificate',
                problems: s.problems.map((c) => c + (NOTES[c] ? ': ' + NOTES[c] : '')).join('; '),
            })),
        },
    };
} else if (session && session.state && session.state.status === 'hash_submitted') {
    part = 'submitted'; value = {};
} else if (ev === 'certificate') {
    part = 'scanned'; value = {};
} else if (ev === 'signature') {
    part = 'approved'; value = {};
} else if (msg.challengeCode && msg.qr) {
    part = 'created'; value = { documentName: msg.documentName || 'Document.pdf' };
} else {
    return null;
}
save(ref, part, value);
return null;
'''

LOOKUP = r'''// The session's progress (each step was kept under its own key, with the time it happened), or a 404 answer.
const ref = String((msg.req.params && msg.req.params.signRef) || '');
const safe = (r) => r.replace(/[^A-Za-z0-9_-]/g, '_');
// the finish node's steps are named by the short sign_ref its status shows
const live = 'live_' + (ref.length > 12 ? ref.slice(0, 8) : ref);
const PARTS = ['created', 'scanned', 'submitted', 'approved', 'result', 'failed'];
const LIVE = ['timestamped', 'validation', 'archived'];
const keys = PARTS.map((part) => 'signingPage_' + safe(ref) + '_' + part).concat(LIVE.map((part) => 'signingPage_' + safe(live) + '_' + part));
flow.get(keys, (err, ...values) => {
    if (err) return node.error(err, msg);
    const v = Object.fromEntries(PARTS.concat(LIVE).map((part, i) => [part, values[i]]));
    if (!v.created) {
        msg.statusCode = 404;
        msg.payload = { code: 'SIGN_REF_NOT_FOUND', message: 'No signing session ' + ref + ' on this page' };
        return node.send([null, msg]);
    }
    // a later step implies the earlier ones (an output may be wired differently); the result has the last word
    const ORDER = ['created', 'scanned', 'submitted', 'approved'].concat(LIVE);
    const last = v.result ? 3 : Math.max(...ORDER.map((s, i) => (v[s] ? i : -1)));
    const steps = Object.assign(Object.fromEntries(ORDER.map((s, i) => [s, i <= last || Boolean(v[s])])), v.result ? v.result.steps : {});
    const at = Object.fromEntries(ORDER.filter((s) => v[s] && v[s].at).map((s) => [s, v[s].at]));
    if (v.result) at.verified = v.result.at;
    msg.payload = {
        signRef: ref, documentName: v.created.documentName, steps, at, details: v.result ? v.result.details : {},
        state: v.failed ? 'failed' : v.result ? 'completed' : 'running', error: v.failed,
        valid: v.result && v.result.valid, level: v.result && v.result.level, file: v.result && v.result.file, report: v.result && v.result.report,
    };
    node.send([msg, null]);
});
return null;
'''

STATUS = r'''const p = msg.payload;
msg.payload = { signRef: p.signRef, documentName: p.documentName, state: p.state, steps: p.steps, at: p.at, details: p.details, error: p.error, level: p.level, valid: p.valid };
return msg;
'''

SIGNED_FILE = r'''const p = msg.payload;
if (p.state !== 'completed' || !p.file) {
    msg.statusCode = 404;
    msg.payload = { code: 'STATE_INVALID', message: 'Session ' + p.signRef + ' has no signed PDF (yet)' };
    return [null, msg];
}
msg.filename = p.file;
msg.headers = { 'content-type': 'application/pdf',
    'content-disposition': 'attachment; filename="' + p.documentName.replace(/\.pdf$/i, '').replace(/[^A-Za-z0-9 ._-]/g, '_') + '-signed.pdf"' };
return [msg, null];
'''

SAMPLE_LIST = r'''// The samples, when a folder holds them (the demo sets SINGPASS_SAMPLES_DIR); otherwise the page offers upload only.
msg.payload = env.get('SINGPASS_SAMPLES_DIR') ? SAMPLES : [];
return msg;
'''

SAMPLE_FILE = r'''// Only the listed samples, from the folder the demo names (SINGPASS_SAMPLES_DIR): never a path from the request.
const name = String((msg.req.params && msg.req.params.name) || '');
const dir = env.get('SINGPASS_SAMPLES_DIR');
if (!dir || !SAMPLES.includes(name)) {
    msg.statusCode = 404;
    msg.payload = { code: 'INVALID_INPUT', message: 'No sample document ' + name };
    return [null, msg];
}
msg.filename = dir + '/' + name;
msg.headers = { 'content-type': 'application/pdf' };
return [msg, null];
'''


def add_signing_page(flow):
    tab = next(n['id'] for n in flow if n.get('type') == 'tab')
    by_id = {n['id']: n for n in flow}
    n = lambda **kw: {'z': tab, **kw}
    by_id['sf-page']['template'] = _read('signing-page.html')

    # Progress: the start node and the signing nodes' outputs also go to the recorder.
    for source, output in [('sf-start', 0), ('sf-webhook', 0), ('sf-webhook', 1), ('sf-on-cert', 0), ('sf-write', 0), ('sf-on-error', 0), ('sf-catch', 0), ('sf-start-catch', 0)]:
        by_id[source]['wires'][output].append('sf-p-record')

    y = 780
    samples_js = 'const SAMPLES = ' + repr(SAMPLES).replace("'", '"') + ';\n'
    return flow + [
        n(id='sf-p-c', type='comment', name='5. The signing page follows the session: status, sample documents, signed PDF, verification report', x=420, y=y, wires=[]),
        n(id='sf-p-record', type='function', name='remember progress for the page', func=RECORD, outputs=0, x=1090, y=300, wires=[]),
        n(id='sf-p-finish-status', type='status', name='finish steps', scope=['sf-finish'], x=1100, y=250, wires=[['sf-p-record']]),

        n(id='sf-p-status-in', type='http in', name='', url='/sign/status/:signRef', method='get', upload=False, swaggerDoc='', x=170, y=y + 40, wires=[['sf-p-lookup-status']]),
        n(id='sf-p-lookup-status', type='function', name='session progress', func=LOOKUP, outputs=2, x=420, y=y + 40, wires=[['sf-p-status'], ['sf-p-out']]),
        n(id='sf-p-status', type='function', name='status JSON', func=STATUS, outputs=1, x=620, y=y + 40, wires=[['sf-p-out']]),

        n(id='sf-p-signed-in', type='http in', name='', url='/sign/signed/:signRef', method='get', upload=False, swaggerDoc='', x=170, y=y + 90, wires=[['sf-p-lookup-signed']]),
        n(id='sf-p-lookup-signed', type='function', name='session progress', func=LOOKUP, outputs=2, x=420, y=y + 90, wires=[['sf-p-signed-file'], ['sf-p-out']]),
        n(id='sf-p-signed-file', type='function', name='signed PDF path', func=SIGNED_FILE, outputs=2, x=620, y=y + 90, wires=[['sf-p-read'], ['sf-p-out']]),
        n(id='sf-p-read', type='file in', name='read PDF', filename='filename', filenameType='msg', format='', chunk=False, sendError=False, encoding='none', allProps=False, x=820, y=y + 90, wires=[['sf-p-out']]),

        n(id='sf-p-report-in', type='http in', name='', url='/sign/report/:signRef', method='get', upload=False, swaggerDoc='', x=170, y=y + 140, wires=[['sf-p-lookup-report']]),
        n(id='sf-p-lookup-report', type='function', name='session progress', func=LOOKUP, outputs=2, x=420, y=y + 140, wires=[['sf-p-report'], ['sf-p-out']]),
        n(id='sf-p-report', type='template', name='verification report page', field='payload', fieldType='msg', format='html', syntax='mustache', template=_read('report.html'), output='str', x=640, y=y + 140, wires=[['sf-p-html']]),
        n(id='sf-p-html', type='http response', name='', statusCode='', headers={'content-type': 'text/html; charset=utf-8'}, x=850, y=y + 140, wires=[]),

        n(id='sf-p-samples-in', type='http in', name='', url='/sign/samples', method='get', upload=False, swaggerDoc='', x=160, y=y + 190, wires=[['sf-p-samples']]),
        n(id='sf-p-samples', type='function', name='sample list', func=samples_js + SAMPLE_LIST, outputs=1, x=420, y=y + 190, wires=[['sf-p-out']]),
        n(id='sf-p-sample-in', type='http in', name='', url='/sign/samples/:name', method='get', upload=False, swaggerDoc='', x=170, y=y + 240, wires=[['sf-p-sample-file']]),
        n(id='sf-p-sample-file', type='function', name='sample path', func=samples_js + SAMPLE_FILE, outputs=2, x=420, y=y + 240, wires=[['sf-p-read'], ['sf-p-out']]),

        n(id='sf-p-catch', type='catch', name='file not readable', scope=['sf-p-read'], uncaught=False, x=620, y=y + 290, wires=[['sf-p-not-found']]),
        n(id='sf-p-not-found', type='change', name='404', rules=[
            {'t': 'set', 'p': 'payload', 'pt': 'msg', 'to': '{"code": "INVALID_INPUT", "message": "The file is not there any more"}', 'tot': 'json'},
            {'t': 'set', 'p': 'statusCode', 'pt': 'msg', 'to': '404', 'tot': 'num'},
            {'t': 'delete', 'p': 'headers', 'pt': 'msg'}], x=820, y=y + 290, wires=[['sf-p-out']]),
        n(id='sf-p-out', type='http response', name='', statusCode='', headers={}, x=1050, y=y + 140, wires=[]),
    ]
