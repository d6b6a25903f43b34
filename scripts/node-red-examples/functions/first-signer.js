// The first of the signers, in order: each signs the PDF the one before signed (SIGNERS lists who, by role).
msg.documentName = msg.req.query.name;
msg.signer = { position: 1, of: SIGNERS.length, label: SIGNERS[0] };
return msg;
