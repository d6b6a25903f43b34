import * as crypto from 'node:crypto';
import type { TestPki } from './ca';
import { loadAsn1, type Asn1js, type Pkijs } from './deps';
import { HASH_BY_OID, hashFor, namedBits, OID, parseCertificate, randomSerial, toArrayBuffer, toSigningCryptoKey } from './x509';

/**
 * RFC 3161 PKIFailureInfo bit numbers the sandbox reports (section 2.4.2). timeNotAvailable, addInfoNotAvailable and
 * systemFailure are the TSA's own trouble ("not now"); the others refuse the request itself.
 */
export const TSA_FAILURE = {
  badAlg: 0, badRequest: 2, badDataFormat: 5, timeNotAvailable: 14, unacceptedPolicy: 15, unacceptedExtension: 16,
  addInfoNotAvailable: 17, systemFailure: 25,
} as const;
export type TsaFailure = keyof typeof TSA_FAILURE;

/** True for a PKIFailureInfo name the sandbox can answer with. */
export function isTsaFailure(name: unknown): name is TsaFailure {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(TSA_FAILURE, name);
}

/** Imprint algorithms the TSA accepts (SHA-1 is refused on purpose). */
const ACCEPTED_IMPRINTS = new Set<string>([OID.sha256, OID.sha384, OID.sha512]);

class Rejection extends Error {
  constructor(readonly failure: TsaFailure, message: string) {
    super(message);
  }
}

/** DER-encode a rejection TimeStampResp with these PKIFailureInfo bits set. */
export async function tsaRejection(failure: TsaFailure | TsaFailure[], text: string): Promise<Buffer> {
  const { pkijs, asn1js } = await loadAsn1();
  const status = new pkijs.PKIStatusInfo({
    status: 2, // rejection
    statusStrings: [new asn1js.Utf8String({ value: text })],
    failInfo: await namedBits((Array.isArray(failure) ? failure : [failure]).map((f) => TSA_FAILURE[f])),
  });
  return Buffer.from(new pkijs.TimeStampResp({ status }).toSchema().toBER(false));
}

/**
 * The sandbox's RFC 3161 time-stamping authority: SHA-256/384/512 imprints, nonce echoed, TSA certificate included
 * when certReq is set, signed attributes contentType + messageDigest + signingTime + signingCertificateV2.
 */
export class TimeStampAuthority {
  private signer?: Promise<{ cert: Pkijs.Certificate; key: CryptoKey }>;
  constructor(private readonly pki: TestPki) {}

  private loadSigner() {
    this.signer ??= (async () => ({
      cert: await parseCertificate(this.pki.tsa.certDer),
      key: await toSigningCryptoKey(this.pki.tsa.privateKey),
    }))();
    return this.signer;
  }

  /** DER TimeStampReq in, DER TimeStampResp out (bad queries get a `rejection` status, never an exception). */
  async respond(queryDer: Buffer, now: number = Date.now()): Promise<Buffer> {
    try {
      return await this.grant(queryDer, now);
    } catch (err) {
      if (err instanceof Rejection) return tsaRejection(err.failure, err.message);
      throw err;
    }
  }

  private async grant(queryDer: Buffer, now: number): Promise<Buffer> {
    const { pkijs, asn1js } = await loadAsn1();
    let req: Pkijs.TimeStampReq;
    try {
      const asn = asn1js.fromBER(toArrayBuffer(queryDer));
      if (asn.offset === -1 || asn.offset !== queryDer.length) throw new Error('bad DER');
      req = new pkijs.TimeStampReq({ schema: asn.result });
    } catch {
      throw new Rejection('badDataFormat', 'the request is not a DER TimeStampReq');
    }
    if (req.version !== 1) throw new Rejection('badRequest', 'TimeStampReq version must be 1');
    const algorithm = req.messageImprint.hashAlgorithm.algorithmId;
    if (!ACCEPTED_IMPRINTS.has(algorithm)) throw new Rejection('badAlg', 'message imprint must use SHA-256, SHA-384 or SHA-512');
    if (req.messageImprint.hashedMessage.valueBlock.valueHexView.byteLength !== HASH_BY_OID[algorithm].length) {
      throw new Rejection('badDataFormat', 'message imprint length does not match its algorithm');
    }
    if (req.reqPolicy && req.reqPolicy !== this.pki.tsaPolicy) throw new Rejection('unacceptedPolicy', `only policy ${this.pki.tsaPolicy} is offered`);
    if (req.extensions?.length) throw new Rejection('unacceptedExtension', 'no request extensions are supported');

    const { cert, key } = await this.loadSigner();
    const genTime = new Date(Math.floor(now / 1000) * 1000);
    const tst = new pkijs.TSTInfo({
      version: 1,
      policy: this.pki.tsaPolicy,
      messageImprint: req.messageImprint,
      serialNumber: new asn1js.Integer({ valueHex: randomSerial() }),
      genTime,
      accuracy: new pkijs.Accuracy({ seconds: 1 }),
      ...(req.nonce ? { nonce: req.nonce } : {}),
      tsa: new pkijs.GeneralName({ type: 4, value: cert.subject }),
    });
    const tstDer = Buffer.from(tst.toSchema().toBER(false));

    const digestName = hashFor(this.pki.tsa.privateKey);
    const digestNode = digestName === 'SHA-384' ? 'sha384' : 'sha256';
    const attributes = [
      attribute(pkijs, OID.contentType, new asn1js.ObjectIdentifier({ value: OID.tstInfo })),
      attribute(pkijs, OID.signingTime, new asn1js.UTCTime({ valueDate: genTime })),
      attribute(pkijs, OID.messageDigest, new asn1js.OctetString({ valueHex: crypto.createHash(digestNode).update(tstDer).digest() })),
      attribute(pkijs, OID.signingCertificateV2, signingCertificateV2(asn1js, cert, this.pki.tsa.certDer)),
    ];
    // DER SET OF: OpenSSL re-encodes signed attributes (sorted) before verifying, so they must already be sorted.
    attributes.sort((a, b) => Buffer.compare(Buffer.from(a.toSchema().toBER(false)), Buffer.from(b.toSchema().toBER(false))));

    const signedData = new pkijs.SignedData({
      version: 3,
      encapContentInfo: new pkijs.EncapsulatedContentInfo({
        eContentType: OID.tstInfo,
        eContent: new asn1js.OctetString({ valueHex: tstDer }),
      }),
      signerInfos: [new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes }),
      })],
      ...(req.certReq ? { certificates: [cert] } : {}),
    });
    await signedData.sign(key, 0, digestName);
    const token = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
    return Buffer.from(new pkijs.TimeStampResp({
      status: new pkijs.PKIStatusInfo({ status: 0 }), // granted
      timeStampToken: token,
    }).toSchema().toBER(false));
  }
}

function attribute(pkijs: typeof Pkijs, type: string, value: InstanceType<typeof Asn1js.BaseBlock>): Pkijs.Attribute {
  return new pkijs.Attribute({ type, values: [value] });
}

/** SigningCertificateV2 ::= SEQ { SEQ OF ESSCertIDv2 } with ESSCertIDv2 { certHash (SHA-256, default alg omitted), IssuerSerial }. */
function signingCertificateV2(asn1js: typeof Asn1js, cert: Pkijs.Certificate, certDer: Buffer) {
  const issuerSerial = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({ value: [new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 4 }, value: [cert.issuer.toSchema()] })] }),
      new asn1js.Integer({ valueHex: toArrayBuffer(Buffer.from(cert.serialNumber.valueBlock.valueHexView)) }),
    ],
  });
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: crypto.createHash('sha256').update(certDer).digest() }), issuerSerial],
  });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
}
