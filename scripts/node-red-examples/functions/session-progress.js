// The session's progress (each step was kept under its own key, with the time it happened), or a 404 answer.
const ref = String((msg.req.params && msg.req.params.signRef) || '');
const safe = (r) => r.replace(/[^A-Za-z0-9_-]/g, '_');
// the finish node's steps are named by the short sign_ref its status shows
const live = 'live_' + (ref.length > 12 ? ref.slice(0, 8) : ref);
const PARTS = ['created', 'scanned', 'submitted', 'approved', 'result', 'failed'];
const LIVE = ['timestamped', 'validation', 'archived'];
const keys = PARTS.map((part) => 'signingPage_' + safe(ref) + '_' + part).concat(LIVE.map((part) => 'signingPage_' + safe(live) + '_' + part));
flow.get(keys, (err, ...values) => {
    if (err) return node.error(err, msg);
    const v = Object.fromEntries(PARTS.concat(LIVE).map((part, i) => [part, values[i]]));
    if (!v.created) {
        msg.statusCode = 404;
        msg.payload = { code: 'SIGN_REF_NOT_FOUND', message: 'No signing session ' + ref + ' on this page' };
        return node.send([null, msg]);
    }
    // a later step implies the earlier ones (an output may be wired differently); the result has the last word
    const ORDER = ['created', 'scanned', 'submitted', 'approved'].concat(LIVE);
    const last = v.result ? 3 : Math.max(...ORDER.map((s, i) => (v[s] ? i : -1)));
    const steps = Object.assign(Object.fromEntries(ORDER.map((s, i) => [s, i <= last || Boolean(v[s])])), v.result ? v.result.steps : {});
    const at = Object.fromEntries(ORDER.filter((s) => v[s] && v[s].at).map((s) => [s, v[s].at]));
    if (v.result) at.verified = v.result.at;
    msg.payload = {
        signRef: ref, documentName: v.created.documentName, steps, at, details: v.result ? v.result.details : {},
        state: v.failed ? 'failed' : v.result ? 'completed' : 'running', error: v.failed,
        valid: v.result && v.result.valid, level: v.result && v.result.level, file: v.result && v.result.file, report: v.result && v.result.report,
    };
    node.send([msg, null]);
});
return null;
