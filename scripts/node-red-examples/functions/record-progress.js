// Where each session is, for the signing page (GET /sign/status/:signRef): fed by the signing nodes' outputs, and
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
                integrity: !(s.integrity.digestMatches && s.integrity.signatureValid) ? 'BROKEN'
                    : s.integrity.changedAfterSigning ? 'the signed bytes are unchanged and the signature verifies, but the document was CHANGED after it was signed'
                        : 'intact: the signed bytes are unchanged and the signature verifies',
                chain: s.chain.subjects,
                trust: s.chain.trusted ? 'trusted (ends at a trusted root)' : 'NOT trusted',
                revocation: s.revocationDataComplete ? 'embedded: an OCSP answer for every certificate of the chain' : 'not embedded for every certificate',
                // Problems are real ones (the signature is not valid); notes say what is fine to know, such as the
                // validation data and document timestamp B-LT/B-LTA append after the signature. Both in plain words.
                hasProblems: (s.problemDetails || []).length > 0,
                problems: s.problemDetails || [],
                hasNotes: (s.notes || []).length > 0,
                notes: s.notes || [],
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
