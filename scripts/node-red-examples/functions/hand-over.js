// The next signer's page link, for your process to send to that signer alone (an email or chat node here): the link
// opens their page, so it goes nowhere else. The example appends it to handovers.jsonl in the signed folder.
msg.payload = JSON.stringify({ previousSignRef: msg.signer.previousSignRef, signRef: msg.signRef, position: msg.signer.position, of: msg.signer.of,
    label: msg.signer.label, page: 'signers/s/' + encodeURIComponent(msg.signRef) + '?link=' + encodeURIComponent(msg.signerLink.token), at: new Date().toISOString() });
const dir = env.get('SINGPASS_SIGNED_DIR') || 'signed';
msg.filename = dir + '/handovers.jsonl';
return msg;
