// Only the listed samples, from the folder the demo names (SINGPASS_SAMPLES_DIR): never a path from the request.
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
