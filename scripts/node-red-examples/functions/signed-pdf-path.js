const p = msg.payload;
if (p.state !== 'completed' || !p.file) {
    msg.statusCode = 404;
    msg.payload = { code: 'STATE_INVALID', message: 'Session ' + p.signRef + ' has no signed PDF (yet)' };
    return [null, msg];
}
msg.filename = p.file;
msg.headers = { 'content-type': 'application/pdf',
    'content-disposition': 'attachment; filename="' + p.documentName.replace(/\.pdf$/i, '').replace(/[^A-Za-z0-9 ._-]/g, '_') + '-signed.pdf"' };
return [msg, null];
