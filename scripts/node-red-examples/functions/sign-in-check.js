// Only the people you gave the sign-in may open the upload page and start a session: HTTP Basic against
// SINGPASS_SIGN_USER / SINGPASS_SIGN_PASSWORD (Node-RED's environment, or this tab's environment variables with the
// password as a credential). Not set, or a password under 16 characters: nobody gets in.
const user = env.get('SINGPASS_SIGN_USER');
const password = env.get('SINGPASS_SIGN_PASSWORD');
const refuse = (statusCode, text, headers) => {
    msg.statusCode = statusCode;
    msg.headers = Object.assign({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, headers);
    msg.payload = text;
    return [null, msg];
};
if (typeof user !== 'string' || !user || typeof password !== 'string' || password.length < 16) {
    node.warn('sign-in not configured: set SINGPASS_SIGN_USER and SINGPASS_SIGN_PASSWORD (16+ characters); everyone is refused meanwhile');
    return refuse(503, 'Signing is closed: the sign-in of this flow is not configured (SINGPASS_SIGN_USER, SINGPASS_SIGN_PASSWORD).');
}
const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(String((msg.req && msg.req.headers && msg.req.headers.authorization) || ''));
const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
const expected = user + ':' + password;
// every character compared whatever the first difference, so the time taken says nothing about the password
let diff = given.length ^ expected.length;
for (let i = 0; i < expected.length; i++) diff |= (given.charCodeAt(i) || 0) ^ expected.charCodeAt(i);
if (diff !== 0) return refuse(401, 'Sign in to start a signing session.', { 'www-authenticate': 'Basic realm="Singpass signing", charset="UTF-8"' });
return [msg, null];
