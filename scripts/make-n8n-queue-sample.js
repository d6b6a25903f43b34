#!/usr/bin/env node
// Writes flows/n8n/document-signing-queue-mode.json, the signing sample as n8n in queue mode runs it, from
// flows/n8n/document-signing.json (the one-instance sample stays the source: a fix there reaches both). What differs,
// as docs/n8n-queue-mode.md explains it:
// - its one Singpass Session Store credential (every Session Record node and the Sign Trigger) is created with Kind
//   PostgreSQL, not Folder (a folder is one host's): no node changes for that, only the notes say it;
// - the signed PDF goes to an SFTP server through n8n's own FTP node (protocol SFTP), not to the disk of whichever
//   worker ran the execution; the FTP node outputs an item of its own, so Acknowledge Stored PDF takes the session
//   from Run Due Step's item.
// Run it after changing document-signing.json:
//   node scripts/make-n8n-queue-sample.js [--out <file>]
// test/n8n/samples.test.ts regenerates it and compares with the committed file byte for byte.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const FLOWS = path.join(__dirname, '..', 'flows', 'n8n');
const PKG = '@singpass-flows/n8n-nodes-singpass';
const SFTP_CREDENTIAL = { id: 'spflSftpSigned01', name: 'SFTP (signed PDFs)' };
/** The folder on the SFTP server the signed PDFs go to (the account's chroot in docs/n8n-queue-mode.md). */
const SIGNED_DIR = '/signed';

/** Notes that describe the folder store, in the words of the PostgreSQL one. */
const NOTES = {
  'Create Session': 'B-LTA: Run Due Step finishes the signature to this level itself (signature timestamp, validation data, document timestamp). The record and the PDF saved in the PostgreSQL session store (a new record only) before the answer',
  'Singpass Sign Trigger': "Register <WEBHOOK_URL>/webhook/singpass-sign/webhook as the notification URL of your DSAP client. Its session store is the Singpass Session Store credential of every Session Record node, created with Kind PostgreSQL: each genuine delivery is kept there before the answer; one with another session's token, or for an unknown or ended session, is answered 400 and starts nothing",
  'List Due Sessions': "Sessions whose next step is due (the engine's one rule; a step in progress is left alone for the store credential's idle time, 45 s by default), and webhook events the trigger kept that no run applied, each leased to this run. Delete Ended Sessions: ended sessions past the credential's Keep Ended Sessions (Days), 7 by default, go with their PDF and the store's copy of the signed PDF (one indexed DELETE); the PDFs on the SFTP server are yours to keep",
};

function queueModeSample(base) {
  const wf = JSON.parse(JSON.stringify(base));
  wf.id = 'spflSigningQueue';
  wf.name = 'Singpass document signing, n8n queue mode (PAdES B-LTA)';
  let records = 0;
  let uploads = 0;
  wf.nodes = wf.nodes.map((n) => {
    const p = n.parameters;
    // no store node changes: they all name the one Singpass Session Store credential, which a queue-mode install
    // creates with Kind PostgreSQL
    if (n.credentials && n.credentials.singpassSessionStoreApi) records++;
    if (NOTES[n.name]) n.notes = NOTES[n.name];
    // the upload's output is the FTP node's own ({ success: true }): the session is Run Due Step's item's
    if (p.operation === 'acknowledgeStoredPdf') return { ...n, parameters: { ...p, signRef: "={{ $('Run Due Step').item.json.signRef }}" } };
    if (n.type === 'n8n-nodes-base.readWriteFile' && p.operation === 'write') {
      uploads++;
      const signRef = String(p.fileName).match(/\{\{(.*?)\}\}/);
      if (!signRef) throw new Error(`cannot find the signRef expression in ${n.name}'s file name ${p.fileName}`);
      return {
        parameters: {
          protocol: 'sftp',
          operation: 'upload',
          path: `=${SIGNED_DIR}/{{${signRef[1]}}}-signed.pdf`,
          binaryData: true,
          binaryPropertyName: p.dataPropertyName ?? 'data',
          options: {},
        },
        id: n.id,
        name: 'Upload Signed PDF (SFTP)',
        type: 'n8n-nodes-base.ftp',
        typeVersion: 1.1,
        position: n.position,
        credentials: { sftp: SFTP_CREDENTIAL },
        // A server down: the error output reports it and the schedule hands the same PDF over again (no retries here:
        // the session's hand-over is what is retried, whichever worker runs it)
        onError: 'continueErrorOutput',
        notes: 'The signed PDF to the SFTP server every worker reaches, as /signed/<signRef>-signed.pdf, written over when handed over again. Its error output reports the failure: the PDF comes again',
        notesInFlow: true,
      };
    }
    return n;
  });
  if (records < 4 || uploads !== 1) throw new Error(`document-signing.json has ${records} session store nodes and ${uploads} file writes: not the sample this script knows`);
  const renamed = (name) => (name === base.nodes.find((n) => n.type === 'n8n-nodes-base.readWriteFile').name ? 'Upload Signed PDF (SFTP)' : name);
  wf.connections = Object.fromEntries(Object.entries(wf.connections).map(([from, outputs]) => [renamed(from), {
    ...outputs,
    main: outputs.main.map((out) => out.map((c) => ({ ...c, node: renamed(c.node) }))),
  }]));
  return wf;
}

module.exports = { queueModeSample, SFTP_CREDENTIAL, SIGNED_DIR };

if (require.main === module) {
  const i = process.argv.indexOf('--out');
  const out = i > 0 ? process.argv[i + 1] : path.join(FLOWS, 'document-signing-queue-mode.json');
  const base = JSON.parse(fs.readFileSync(path.join(FLOWS, 'document-signing.json'), 'utf8'));
  fs.writeFileSync(out, JSON.stringify(queueModeSample(base), null, 2) + '\n');
}
