// The company document waiting for an officer's signature: the PDF SINGPASS_OFFICER_DOCUMENT names (a path on the
// Node-RED host; put your own document source here: a database, a file share, the previous step of your process).
const file = env.get('SINGPASS_OFFICER_DOCUMENT');
if (typeof file !== 'string' || !file) {
    msg.statusCode = 503;
    msg.headers = { 'content-type': 'text/plain; charset=utf-8' };
    msg.payload = 'No document is waiting for a signature (set SINGPASS_OFFICER_DOCUMENT to a PDF).';
    return [null, msg];
}
msg.filename = file;
msg.documentName = file.split(/[\\/]/).pop();
return [msg, null];
