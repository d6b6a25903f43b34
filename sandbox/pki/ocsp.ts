import * as crypto from 'node:crypto';
import { REVOCATION_REASONS, type CaName, type IssuedCert, type TestPki } from './ca';
import { loadAsn1, type Pkijs } from './deps';
import { HASH_BY_OID, hashFor, OID, parseCertificate, serialHexOf, toArrayBuffer, toSigningCryptoKey, wholeSeconds } from './x509';

/** RFC 6960 OCSPResponseStatus values the sandbox uses. */
export const OCSP_STATUS = { successful: 0, malformedRequest: 1, internalError: 2, tryLater: 3, unauthorized: 6 } as const;

const DAY = 86_400_000;
/** More CertIDs than any real client sends in one request; bounds the signing work per request. */
export const MAX_CERTS_PER_REQUEST = 20;

interface CaKeys {
  name: CaName;
  cert: Pkijs.Certificate;
  responder: IssuedCert;
  responderCert: Pkijs.Certificate;
  responderKey: CryptoKey;
}

/** Encode a bare OCSPResponse with a non-successful status (no responseBytes). */
export async function ocspErrorResponse(status: number): Promise<Buffer> {
  const { pkijs, asn1js } = await loadAsn1();
  return Buffer.from(new pkijs.OCSPResponse({ responseStatus: new asn1js.Enumerated({ value: status }) }).toSchema().toBER(false));
}

/**
 * The sandbox's OCSP responder. Answers come from the delegated responder certificate of the CA named by the
 * request's CertID (issuer name + key hashes, any of SHA-1/256/384/512); serials this PKI never issued are
 * `unknown`, as are CertIDs naming an issuer we do not operate.
 */
export class OcspResponder {
  private cas?: Promise<CaKeys[]>;
  constructor(private readonly pki: TestPki) {}

  private loadCas(): Promise<CaKeys[]> {
    this.cas ??= Promise.all(
      (['root', 'intermediate'] as const).map(async (name) => ({
        name,
        cert: await parseCertificate(this.pki[name].certDer),
        responder: this.pki.ocspSigners[name],
        responderCert: await parseCertificate(this.pki.ocspSigners[name].certDer),
        responderKey: await toSigningCryptoKey(this.pki.ocspSigners[name].privateKey),
      })),
    );
    return this.cas;
  }

  private matches(ca: CaKeys, certId: Pkijs.CertID): boolean {
    const hash = HASH_BY_OID[certId.hashAlgorithm.algorithmId];
    if (!hash) return false;
    const nameHash = crypto.createHash(hash.node).update(Buffer.from(ca.cert.subject.toSchema().toBER(false))).digest();
    const keyHash = crypto.createHash(hash.node).update(Buffer.from(ca.cert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)).digest();
    return (
      nameHash.equals(Buffer.from(certId.issuerNameHash.valueBlock.valueHexView)) &&
      keyHash.equals(Buffer.from(certId.issuerKeyHash.valueBlock.valueHexView))
    );
  }

  /** DER OCSPRequest in, DER OCSPResponse out (never throws for bad input: answers malformedRequest). */
  async respond(requestDer: Buffer, now: number = Date.now()): Promise<Buffer> {
    const { pkijs, asn1js } = await loadAsn1();
    let request: Pkijs.OCSPRequest;
    try {
      const asn = asn1js.fromBER(toArrayBuffer(requestDer));
      if (asn.offset === -1 || asn.offset !== requestDer.length) throw new Error('bad DER');
      request = new pkijs.OCSPRequest({ schema: asn.result });
      const n = request.tbsRequest.requestList.length;
      if (n === 0 || n > MAX_CERTS_PER_REQUEST) throw new Error('bad request list size');
    } catch {
      return ocspErrorResponse(OCSP_STATUS.malformedRequest);
    }
    const cas = await this.loadCas();
    const first = request.tbsRequest.requestList[0].reqCert;
    // One signer per response: the responder of the first CertID's CA (intermediate's if we do not know that CA).
    const signer = cas.find((ca) => this.matches(ca, first)) ?? cas.find((ca) => ca.name === 'intermediate')!;

    const thisUpdate = wholeSeconds(now);
    const basic = new pkijs.BasicOCSPResponse();
    basic.tbsResponseData.responderID = signer.responderCert.subject;
    basic.tbsResponseData.producedAt = thisUpdate;
    for (const req of request.tbsRequest.requestList) {
      const certId = req.reqCert;
      const serialHex = serialHexOf(certId.serialNumber.valueBlock.valueHexView);
      const record = this.matches(signer, certId) ? this.pki.lookup(serialHex) : undefined;
      const known = record && record.issuer === signer.name ? record : undefined;
      let certStatus;
      if (!known) {
        certStatus = new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 2 } }); // unknown [2] NULL
      } else if (known.revokedAt) {
        const info: InstanceType<typeof asn1js.BaseBlock>[] = [new asn1js.GeneralizedTime({ valueDate: known.revokedAt })];
        if (known.reason) {
          info.push(new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [new asn1js.Enumerated({ value: REVOCATION_REASONS[known.reason] })] }));
        }
        certStatus = new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 1 }, value: info }); // revoked [1] RevokedInfo
      } else {
        certStatus = new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 } }); // good [0] NULL
      }
      basic.tbsResponseData.responses.push(new pkijs.SingleResponse({
        certID: certId, certStatus, thisUpdate, nextUpdate: wholeSeconds(now + DAY),
      }));
    }
    const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === OID.ocspNonce);
    if (nonce) {
      basic.tbsResponseData.responseExtensions = [new pkijs.Extension({ extnID: OID.ocspNonce, critical: false, extnValue: toArrayBuffer(Buffer.from(nonce.extnValue.valueBlock.valueHexView)) })];
    }
    basic.certs = [signer.responderCert];
    await basic.sign(signer.responderKey, hashFor(signer.responder.privateKey));
    return Buffer.from(new pkijs.OCSPResponse({
      responseStatus: new asn1js.Enumerated({ value: OCSP_STATUS.successful }),
      responseBytes: new pkijs.ResponseBytes({
        responseType: OID.ocspBasic,
        response: new asn1js.OctetString({ valueHex: basic.toSchema().toBER(false) }),
      }),
    }).toSchema().toBER(false));
  }
}
