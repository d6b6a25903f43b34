/**
 * PKI clients the PAdES long-term validation needs: RFC 3161 timestamps, RFC 6960 OCSP, RFC 5280 CRLs, certificate paths via AIA.
 * All network calls go through the injectable `fetch` with timeouts and fail with stable codes
 * (`TSA_FAILED`, `OCSP_FAILED`, `CRL_FAILED`, `CHAIN_INCOMPLETE`).
 */
export { requestTimestamp, checkTimestampToken, type RequestTimestampOptions, type TimestampHashAlgorithm, type TimestampTokenInfo } from './timestamp';
export { fetchOcspResponse, checkOcspResponse, matchingOcspResponses, type FetchOcspOptions, type OcspResult, type OcspCertStatus } from './ocsp';
export { fetchCrlStatus, checkCrl, matchingCrls, clearCrlCache, type FetchCrlOptions, type CrlCheckOptions, type CrlResult, type CrlCertStatus } from './crl';
export { buildChain, buildChainPartial, type BuildChainOptions, type ChainProblem } from './chain';
export { ocspUrlOf, crlUrlOf, crlUrlsOf, caIssuersUrlOf, toDer, certsFromPemOrDer } from './x509';
