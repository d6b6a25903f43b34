const p = msg.payload;
msg.payload = { signRef: p.signRef, documentName: p.documentName, state: p.state, steps: p.steps, at: p.at, details: p.details, error: p.error, level: p.level, valid: p.valid };
return msg;
