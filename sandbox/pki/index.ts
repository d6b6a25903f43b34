/** The sandbox's national test PKI: CA hierarchy, OCSP responder and TSA (a peer: imports nothing from src/). */
export {
  createTestPki, testNric, REVOCATION_REASONS, SANDBOX_TSA_POLICY, SANDBOX_USER_POLICY,
  type TestPki, type IssuedCert, type IssueUserOptions, type CreateTestPkiOptions, type CertRecord, type CertStatus,
  type CaName, type RevocationReason,
} from './ca';
export { createPkiService, startPkiServer, type PkiService, type RunningPkiServer } from './service';
export { OcspResponder, OCSP_STATUS } from './ocsp';
export { isTsaFailure, TimeStampAuthority, TSA_FAILURE, tsaRejection, type TsaFailure } from './tsa';
export { derToPem, pemToDer, normalizeSerialHex, type KeyCurve } from './x509';
