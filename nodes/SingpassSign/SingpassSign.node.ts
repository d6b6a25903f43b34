import { NodeConnectionTypes, type IExecuteFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription } from 'n8n-workflow';
import { testNotificationToken, testSessionStore, testSessionStorePostgres, testSignApi } from '../shared/credential-tests';
import { STORE_CREDENTIAL_VERSIONS, STORE_PARAMETER_VERSIONS } from '../shared/record-store';
import { route } from '../shared/router';
import { operationProperties, operations } from './actions/router';

/** Session Record operations that only read and write records: no Singpass credential. */
const RECORD_ONLY_OPERATIONS = ['saveRecord', 'loadRecord', 'listDue', 'cleanUp', 'saveSignedPdf', 'signerPage', 'acknowledgeStoredPdf', 'reportStorageFailure'];
/**
 * Operations that build the signing engine (it needs the notification token secret too), and the Signer Page, whose
 * links are keyed with that secret.
 */
/** Operations that use the session store credential (version 2 on). */
const STORE_OPERATIONS = [...Object.keys(operations.sessionRecord), 'checkCertificateStatus'];
const ENGINE_OPERATIONS = [...Object.keys(operations.session), 'createStoredSession', 'prepareStoredSignature', 'submitStoredHash', 'runDueStep', 'startNextSigner', 'checkCertificateStatus', 'signerPage'];

/**
 * Singpass document signing for a DSAP: sessions (QR code, webhook events, the signed PDF) and PAdES document
 * operations. The signing state is a small JSON record your workflow stores between the two webhook events.
 * Version 2: the Session Record operations keep it in the "Singpass Session Store" credential's store (chosen once
 * for the workflow); version 1 (saved workflows) in the node's own Store parameter. Version 3 (as 2) only changes a
 * default: Create Session asks for B-LTA unless its Signature Level says otherwise (versions 1 and 2: B-T).
 */
export class SingpassSign implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Singpass Sign',
    name: 'singpassSign',
    icon: { light: 'file:sign.svg', dark: 'file:sign.dark.svg' },
    group: ['transform'],
    version: [1, 2, 3],
    defaultVersion: 3,
    subtitle: '={{ $parameter["operation"] }}',
    description: 'Sign PDFs with Singpass (PAdES B-B to B-LTA)',
    defaults: { name: 'Singpass Sign' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: [
      // the Session Record operations only read and write records (files, or the PostgreSQL store's credential), but
      // Run Due Step, which runs a session's step
      { name: 'singpassSignApi', required: true, testedBy: 'singpassSignApiTest', displayOptions: { hide: { operation: RECORD_ONLY_OPERATIONS } } },
      {
        name: 'singpassNotificationTokenApi', required: true, testedBy: 'singpassNotificationTokenApiTest',
        displayOptions: { show: { operation: ENGINE_OPERATIONS } },
      },
      // literal names: n8n's lint matches testedBy by them
      {
        name: 'singpassSessionStoreApi', required: true, testedBy: 'singpassSessionStoreApiTest',
        // and Check Certificate Status of the trigger's certificate event: the trigger keeps it there, the item carries none
        displayOptions: { show: { operation: STORE_OPERATIONS, '@version': STORE_CREDENTIAL_VERSIONS }, hide: { certificateFrom: ['field'] } },
      },
      {
        name: 'singpassSessionStorePostgresApi', required: true, testedBy: 'singpassSessionStorePostgresApiTest',
        displayOptions: { show: { resource: ['sessionRecord'], store: ['postgres'], '@version': STORE_PARAMETER_VERSIONS } },
      },
    ],
    properties: [
      {
        displayName: 'Resource',
        name: 'resource',
        type: 'options',
        noDataExpression: true,
        options: [
          { name: 'Signing Session', value: 'session' },
          { name: 'Signed Document', value: 'document' },
          { name: 'Certificate', value: 'certificate' },
          { name: 'Session Record', value: 'sessionRecord' },
        ],
        default: 'session',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['session'] } },
        options: [
          { name: 'Apply Webhook Event', value: 'applyEvent', action: 'Apply a webhook event', description: 'Signature or error event: record it. Certificate event (one-step variant): check, prepare and submit in one call; Prepare + Submit survive a crash in between.' },
          { name: 'Create Session', value: 'createSession', action: 'Create a signing session', description: 'Open a session for a PDF: QR code (PNG), challenge code and expiry for the user\'s page' },
          { name: 'Expire Session', value: 'expireSession', action: 'Expire a session', description: 'End a session no event can reach any more (for a schedule)' },
          { name: 'Finalize Signature', value: 'finalizeSignature', action: 'Finalize the signature', description: 'On the record stored with the signature: embed it and reach the chosen level (B-T, B-LT, B-LTA); outputs the signed PDF, or the record to store and finish again later when a TSA or OCSP responder fails for the moment' },
          { name: 'Prepare PDF Signature', value: 'preparePdfSignature', action: 'Prepare the PDF signature', description: 'Certificate event: check the certificate (OCSP) and prepare the PDF; nothing is sent yet. Store the record, then Submit Document Hash.' },
          { name: 'Submit Document Hash', value: 'submitDocumentHash', action: 'Submit the document hash', description: 'Send the hash of a record Prepare PDF Signature output (the same hash again if run twice); a refused first call ends the session with the service\'s reason; store the record' },
        ],
        default: 'createSession',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['document'] } },
        options: [
          { name: 'Add Validation Data', value: 'addValidationData', action: 'Add validation data', description: 'PAdES B-LT: certificate chains and OCSP answers for every signature' },
          { name: 'Add Document Timestamp', value: 'addDocumentTimestamp', action: 'Add a document timestamp', description: 'PAdES B-LTA: an archive timestamp over the whole PDF' },
          { name: 'Verify Signed PDF', value: 'verifySignedPdf', action: 'Verify a signed PDF', description: 'Check every signature and timestamp; the report as JSON' },
        ],
        default: 'verifySignedPdf',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['certificate'] } },
        options: [
          { name: 'Check Certificate Status', value: 'checkCertificateStatus', action: 'Check a certificate s status', description: 'Chain to your trusted roots and ask OCSP whether the certificate is good' },
        ],
        default: 'checkCertificateStatus',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['sessionRecord'] } },
        options: [
          { name: 'Acknowledge Stored PDF', value: 'acknowledgeStoredPdf', action: 'Acknowledge the stored signed PDF', description: 'After your storage node wrote the signed PDF Run Due Step handed over: the session ends completed and is not handed over again' },
          { name: 'Clean Up Ended Sessions', value: 'cleanUp', action: 'Clean up ended sessions', description: 'For a daily schedule: delete completed, failed and expired sessions (record and saved PDF) past the retention (List Due Sessions can do it instead, with Delete Ended Sessions)' },
          { name: 'Create Session', value: 'createStoredSession', action: 'Create a session and save its record', description: 'Open a session for a PDF (as Signing Session ▸ Create Session) and save its record and PDF in the session store as a new record, for the steps that take the session from the store' },
          { name: 'List Due Sessions', value: 'listDue', action: 'List sessions due for a step', description: 'For a schedule: sessions that need a step now, each with its action: resubmit the hash, finish the signature, hand a signed PDF over again (not acknowledged in time), or expire; also webhook events kept by the trigger that no run applied, to replay; optionally deletes ended sessions past the store\'s retention' },
          { name: 'Load Session Record', value: 'loadRecord', action: 'Load a session record', description: 'Read the record stored under the signRef (and the saved PDF): the record and its revision; a missing record is "found: false"' },
          { name: 'Prepare PDF Signature', value: 'prepareStoredSignature', action: 'Prepare the stored session s PDF signature', description: 'Certificate event, on the session in the store: check the certificate (OCSP), prepare the PDF and save the save point (compare-and-set); nothing is sent yet. Then Submit Document Hash (Session Record).' },
          { name: 'Report Storage Failure', value: 'reportStorageFailure', action: 'Report a storage failure', description: 'On your storage node\'s error output: the failure kept in the session, and the signed PDF handed over again after a short backoff' },
          { name: 'Run Due Step', value: 'runDueStep', action: 'Run a session s due step', description: 'For the resume schedule, after List Due Sessions: run the step the session needs (continue the certificate, resubmit the hash, finish the signature to the level asked for, hand its signed PDF over, expire; a kept event applied first) and save it; a signed PDF handed over as binary, for your storage node then Acknowledge Stored PDF' },
          { name: 'Save Session Record', value: 'saveRecord', action: 'Save a session record', description: 'Store the record under its signRef atomically, only if the stored revision is still the one loaded (compare-and-set): never a partial record, never over another execution\'s change' },
          { name: 'Save Signed PDF', value: 'saveSignedPdf', action: 'Save a signed PDF', description: 'Store a signed PDF of a completed session where the Signer Page hands it out, over the one Run Due Step stored (e.g. a PDF your workflow changed after)' },
          { name: 'Signer Page', value: 'signerPage', action: 'Answer the signer s page', description: 'Behind a Webhook node (GET ?ref&key&view): check the link, then the page with the QR code and live progress, its status JSON, or the signed PDF — read from the store, so any n8n process answers; every answer as binary for one Respond to Webhook node' },
          { name: 'Start Next Signer', value: 'startNextSigner', action: 'Start the next signer s session', description: 'Several signers in order, behind a Webhook node (GET ?ref&key): once the previous signer completed, start the next signer\'s session on their signed PDF — once, whoever asks first — and output its page link' },
          { name: 'Submit Document Hash', value: 'submitStoredHash', action: 'Submit the stored session s document hash', description: 'After Prepare PDF Signature (Session Record): send the hash saved in the store (never a new one; of two runs only one sends) and save the result' },
        ],
        default: 'loadRecord',
      },
      {
        displayName: 'Store the output "record" under its signRef after every session step (the Session Record resource: atomic compare-and-set files; or a Data Table or database), and pass it back to the next step: no signing state is kept in n8n\'s memory, so sessions survive restarts and queue mode.',
        name: 'stateNotice',
        type: 'notice',
        default: '',
        displayOptions: { show: { resource: ['session'] } },
      },
      ...operationProperties,
    ],
  };

  methods = {
    credentialTest: { singpassSignApiTest: testSignApi, singpassNotificationTokenApiTest: testNotificationToken, singpassSessionStoreApiTest: testSessionStore, singpassSessionStorePostgresApiTest: testSessionStorePostgres },
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return route(this, operations);
  }
}
