// A signer finished: the next one signs this signed PDF (msg.payload) in a session of their own, which names the one
// before (previousSignRef). After the last signer the chain is done: its PDF carries every signature.
const place = msg.session && msg.session.request && msg.session.request.signer;
if (!place || msg.session.state.status !== 'completed' || place.position >= place.of) return [null, msg];
msg.documentName = msg.session.request.documentName;
msg.signer = { position: place.position + 1, of: place.of, label: SIGNERS[place.position], previousSignRef: msg.signRef };
delete msg.filename;
return [msg, null];
