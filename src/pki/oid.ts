/**
 * Object identifiers used by the PKI clients and the PAdES writer/verifier: one table, so a typo cannot hide in one
 * module. Dependency-free on purpose: the PAdES DER writer uses it without loading pkijs.
 */
export const OID = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  adOcsp: '1.3.6.1.5.5.7.48.1',
  adCaIssuers: '1.3.6.1.5.5.7.48.2',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  ocspNonce: '1.3.6.1.5.5.7.48.1.2',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  kpOcspSigning: '1.3.6.1.5.5.7.3.9',
  kpTimeStamping: '1.3.6.1.5.5.7.3.8',
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
} as const;
