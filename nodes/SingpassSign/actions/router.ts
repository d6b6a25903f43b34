import type { OperationTable } from '../../shared/router';
import * as checkCertificateStatus from './certificate/checkStatus.operation';
import * as addDocumentTimestamp from './document/addDocumentTimestamp.operation';
import * as addValidationData from './document/addValidationData.operation';
import * as verifySignedPdf from './document/verify.operation';
import * as acknowledgeStoredPdf from './record/acknowledgeStored.operation';
import * as cleanUp from './record/cleanUp.operation';
import * as createStoredSession from './record/createStored.operation';
import * as listDue from './record/listDue.operation';
import * as loadRecord from './record/load.operation';
import * as prepareStoredSignature from './record/prepareStored.operation';
import * as reportStorageFailure from './record/reportStorageFailure.operation';
import * as runDueStep from './record/runDue.operation';
import * as saveRecord from './record/save.operation';
import * as saveSignedPdf from './record/saveSignedPdf.operation';
import * as signerPage from './record/signerPage.operation';
import * as startNextSigner from './record/startNextSigner.operation';
import * as submitStoredHash from './record/submitStored.operation';
import * as applyEvent from './session/applyEvent.operation';
import * as createSession from './session/create.operation';
import * as expireSession from './session/expire.operation';
import * as finalizeSignature from './session/finalize.operation';
import * as preparePdfSignature from './session/prepare.operation';
import * as submitDocumentHash from './session/submitHash.operation';

export const operations: OperationTable = {
  session: { createSession, preparePdfSignature, submitDocumentHash, applyEvent, finalizeSignature, expireSession },
  document: { addValidationData, addDocumentTimestamp, verifySignedPdf },
  certificate: { checkCertificateStatus },
  sessionRecord: { createStoredSession, saveRecord, loadRecord, prepareStoredSignature, submitStoredHash, listDue, runDueStep, cleanUp, signerPage, saveSignedPdf, startNextSigner, acknowledgeStoredPdf, reportStorageFailure },
};

/** All operations' parameters, for the node description. */
export const operationProperties = Object.values(operations).flatMap((r) => Object.values(r).flatMap((op) => op.description));
