// The verification report page's data, from the verify node's report on the signed PDF the store keeps.
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
msg.headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
return msg;
