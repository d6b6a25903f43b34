// The verification report page's data, from the verify node's report on the signed PDF the store keeps.
const NOTES = {
    NOT_COVERING_WHOLE_FILE: 'validation data and a document timestamp were appended after it (expected for B-LT/B-LTA)',
    REVOCATION_DATA_MISSING: 'no OCSP answer for every certificate embedded',
};
const r = msg.verification;
msg.payload = {
    signRef: msg.signRef,
    documentName: msg.session.request.documentName,
    link: String(msg.req.query.link),
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
msg.headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
return msg;
