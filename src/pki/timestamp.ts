import { randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { SingpassFlowsError, invalidInput } from '../errors';
import { httpRequest, safeUrl, type Fetch } from '../http';
import { checkSignerInfo, parseSignedData, tstInfoOf } from './cms';
import { checkTimestampTokenNatively } from './timestamp-token';
import { readSignedData } from './signed-data';
import { wellFormed } from './der-shape';
import { children, nullValue, octetString, oid as derOid, readTlv, seq, smallInteger, tlv } from '../pades/der';
import { BER_OPTIONS, OID, certDer, digest, extendedKeyUsages, hashNameOf, parseAsn1, positiveNonce, subjectString, toArrayBuffer, type HashName } from './x509';

export type TimestampHashAlgorithm = 'SHA-256' | 'SHA-384' | 'SHA-512';

const HASHES: Record<TimestampHashAlgorithm, { name: HashName; length: number }> = {
  'SHA-256': { name: 'sha256', length: 32 },
  'SHA-384': { name: 'sha384', length: 48 },
  'SHA-512': { name: 'sha512', length: 64 },
};

export interface RequestTimestampOptions {
  /** The TSA endpoint (RFC 3161 over HTTP). */
  url: string;
  /** Hash algorithm `digest` was computed with (default SHA-256). */
  hashAlgorithm?: TimestampHashAlgorithm;
  fetch?: Fetch;
  timeoutMs?: number;
}

/** What a checked timestamp token says. */
export interface TimestampTokenInfo {
  genTime: Date;
  policy: string;
  serialHex: string;
  hashAlgorithm: HashName;
  hashedMessage: Buffer;
  nonce?: Buffer;
  /** The TSA certificate (DER) that signed the token, when the token carries it. */
  tsaCertificate?: Buffer;
  /** Every certificate embedded in the token (DER). */
  certificates: Buffer[];
}

/** RFC 3161 (2.4.2) PKIFailureInfo: the named bits, numbered from the first (most significant) bit of the string. */
export const TIMESTAMP_FAILURE_BITS = {
  badAlg: 0, badRequest: 2, badDataFormat: 5, timeNotAvailable: 14, unacceptedPolicy: 15, unacceptedExtension: 16,
  addInfoNotAvailable: 17, systemFailure: 25,
} as const;
export type TimestampFailure = keyof typeof TIMESTAMP_FAILURE_BITS;

/**
 * The failures a TSA reports that are its own passing trouble, not a verdict on our request: asked again later the
 * same request can be granted. The others (a bad algorithm, request or policy) would be refused again.
 */
const TEMPORARY_TIMESTAMP_FAILURES: ReadonlySet<TimestampFailure> = new Set(['timeNotAvailable', 'addInfoNotAvailable', 'systemFailure']);

/**
 * The named PKIFailureInfo bits set in a BIT STRING's content (asn1js `valueHexView`: the bytes after the
 * unused-bits count; bit n is byte n >> 3, mask 0x80 >> (n & 7)). Bits past the end are 0 (DER drops trailing zeros).
 */
export function timestampFailuresOf(bits: Uint8Array | undefined): TimestampFailure[] {
  if (!bits) return [];
  const set = (n: number): boolean => bits.length > n >> 3 && (bits[n >> 3] & (0x80 >> (n & 7))) !== 0;
  return (Object.keys(TIMESTAMP_FAILURE_BITS) as TimestampFailure[]).filter((name) => set(TIMESTAMP_FAILURE_BITS[name]));
}

/** RFC 3161 PKIStatus waiting (3): the TSA has the request and will answer later. */
const PKI_STATUS_WAITING = 3;

/** True when a refused timestamp request may be granted if asked again: "waiting", or only temporary failures. */
export function isTemporaryTimestampRefusal(pkiStatus: number, failures: readonly TimestampFailure[]): boolean {
  if (pkiStatus === PKI_STATUS_WAITING) return true;
  return failures.length > 0 && failures.every((f) => TEMPORARY_TIMESTAMP_FAILURES.has(f));
}

/**
 * Asks an RFC 3161 Time-Stamp Authority to timestamp `digest` and returns the TimeStampToken (a CMS ContentInfo,
 * DER) ready to embed. The request carries a random positive nonce and asks for the TSA certificate; the answer is
 * refused (`TSA_FAILED`) unless it is granted, echoes the nonce, covers exactly our digest and its CMS signature
 * verifies with the TSA certificate it carries.
 *
 * @example
 * const tst = await requestTimestamp(createHash('sha256').update(signatureValue).digest(), { url: 'http://127.0.0.1:4000/ca/tsa' });
 */
export async function requestTimestamp(digestBytes: Buffer, options: RequestTimestampOptions): Promise<Buffer> {
  const hashAlgorithm = options.hashAlgorithm ?? 'SHA-256';
  const hash = HASHES[hashAlgorithm];
  if (!hash) throw invalidInput('hashAlgorithm', 'must be SHA-256, SHA-384 or SHA-512');
  if (!Buffer.isBuffer(digestBytes) || digestBytes.length !== hash.length) {
    throw invalidInput('digest', `must be a ${hash.length}-byte ${hashAlgorithm} digest`);
  }
  if (!options.url) throw invalidInput('tsaUrl', 'a TSA URL is required');
  const nonce = positiveNonce(randomBytes(16));
  const body = timestampRequest(hash.name, digestBytes, nonce);
  const target = safeUrl(options.url);
  let res;
  try {
    res = await httpRequest(options.url, { method: 'POST', headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' }, body: new Uint8Array(body) }, { fetch: options.fetch, timeoutMs: options.timeoutMs });
  } catch (e) {
    const err = e as SingpassFlowsError;
    throw new SingpassFlowsError('TSA_FAILED', `The timestamp authority at ${target} could not be reached (${err.code ?? 'error'}): ${err.message}`, { url: target, retryable: true, cause: err.code }, { cause: e });
  }
  if (res.status !== 200) {
    throw new SingpassFlowsError('TSA_FAILED', `The timestamp authority at ${target} answered HTTP ${res.status}`, { url: target, status: res.status, retryable: res.status >= 500 });
  }
  // A granted answer in plain DER whose token checks natively (our digest, our nonce) is taken as sent; any other
  // answer is read by the schema below, which says what is wrong with it.
  const granted = grantedToken(res.body);
  if (granted) {
    const info = checkTimestampTokenNatively(granted, { digest: digestBytes, hashAlgorithm: hash.name });
    if (info?.nonce?.equals(nonce)) return granted;
  }
  let resp: pkijs.TimeStampResp;
  let asn: asn1js.AsnType;
  try {
    asn = parseAsn1(res.body, 'TSA_FAILED', 'The timestamp response');
    resp = new pkijs.TimeStampResp({ schema: asn });
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw new SingpassFlowsError('TSA_FAILED', `The timestamp authority at ${target} sent a response that is not an RFC 3161 TimeStampResp`, { url: target }, { cause: e });
  }
  const status = resp.status.status;
  if ((status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) || !resp.timeStampToken) {
    const text = resp.status.statusStrings?.map((s) => s.valueBlock.value).join('; ');
    // "waiting", or refused for its own passing reasons (timeNotAvailable, addInfoNotAvailable, systemFailure): the
    // same request may be granted later, so finishing retries it; anything else is a verdict on the request.
    const failInfo = timestampFailuresOf(resp.status.failInfo?.valueBlock.valueHexView);
    const retryable = isTemporaryTimestampRefusal(status, failInfo);
    throw new SingpassFlowsError(
      'TSA_FAILED',
      `The timestamp authority at ${target} refused the request (PKIStatus ${status}${failInfo.length ? `, ${failInfo.join(', ')}` : ''}${text ? `: ${text}` : ''})`,
      { url: target, pkiStatus: status, failInfo, retryable },
    );
  }
  const token = derEncapsulatedContent(Buffer.from((asn as asn1js.Sequence).valueBlock.value[1].valueBeforeDecodeView));
  const info = checkTimestampToken(token, { digest: digestBytes, hashAlgorithm: hash.name });
  if (!info.nonce || !info.nonce.equals(nonce)) {
    throw new SingpassFlowsError('TSA_FAILED', `The timestamp from ${target} does not echo our nonce (a replayed or foreign answer)`, { url: target });
  }
  return token;
}

/** TimeStampReq (RFC 3161 2.4.1) in DER: v1, the message imprint, our nonce, certReq TRUE (what pkijs built). */
function timestampRequest(hash: HashName, digestBytes: Buffer, nonce: Buffer): Buffer {
  const imprint = seq(seq(derOid(OID[hash]), nullValue()), octetString(digestBytes));
  return seq(smallInteger(1), imprint, tlv(0x02, nonce), Buffer.from([0x01, 0x01, 0xff]));
}

/** The token of a TimeStampResp whose status is granted (0) or grantedWithMods (1), when the answer is plain DER. */
function grantedToken(body: Buffer): Buffer | undefined {
  try {
    const top = readTlv(body);
    if (top.tag !== 0x30 || top.end !== body.length) return undefined;
    wellFormed(body, top);
    const [statusInfo, token, ...more] = children(body, top);
    if (!statusInfo || statusInfo.tag !== 0x30 || token?.tag !== 0x30 || more.length) return undefined;
    const status = children(body, statusInfo)[0];
    if (status?.tag !== 0x02 || status.end - status.contentStart !== 1 || body[status.contentStart] > 1) return undefined;
    const der = derTokenOf(body.subarray(token.start, token.end));
    return der && readSignedData(der) ? der : undefined;
  } catch {
    return undefined;
  }
}

/**
 * {@link derEncapsulatedContent} by a TLV walk: the token with a constructed (BER) eContent OCTET STRING rewritten as
 * one primitive OCTET STRING, every other byte as the TSA sent it; the token itself when it is primitive already.
 */
function derTokenOf(token: Buffer): Buffer | undefined {
  const [ciType, ciContent] = children(token, readTlv(token));
  const sd = ciContent?.tag === 0xa0 ? children(token, ciContent)[0] : undefined;
  if (!ciType || !sd || sd.tag !== 0x30) return undefined;
  const sdParts = children(token, sd);
  const encap = sdParts[2];
  const [eType, wrapper] = encap?.tag === 0x30 ? children(token, encap) : [];
  const eContent = wrapper?.tag === 0xa0 ? children(token, wrapper)[0] : undefined;
  if (!eType || !eContent || eContent.tag === 0x04) return Buffer.from(token);
  if (eContent.tag !== 0x24) return undefined;
  const pieces = children(token, eContent);
  if (pieces.some((p) => p.tag !== 0x04)) return undefined;
  const raw = (t: { start: number; end: number }): Buffer => token.subarray(t.start, t.end);
  const flat = octetString(Buffer.concat(pieces.map((p) => token.subarray(p.contentStart, p.end))));
  const encapDer = seq(raw(eType), tlv(0xa0, flat));
  return seq(raw(ciType), tlv(0xa0, seq(...sdParts.map((t, i) => (i === 2 ? encapDer : raw(t))))));
}

/**
 * Checks a TimeStampToken's own integrity (no trust decision): TSTInfo parses, the imprint matches `expected`
 * (when given), the CMS signature verifies with the embedded TSA certificate, and that certificate has the
 * timeStamping extended key usage. Throws `TSA_FAILED` on any mismatch; returns what the token says.
 */
export function checkTimestampToken(token: Buffer, expected?: { digest: Buffer; hashAlgorithm: HashName }): TimestampTokenInfo {
  // Read natively when the token is plainly good; anything else is judged (and named) by the schema reading.
  return checkTimestampTokenNatively(token, expected) ?? checkTimestampTokenWithSchema(token, expected);
}

/** {@link checkTimestampToken} through pkijs: the reading for tokens the native one does not accept, and its reference. */
export function checkTimestampTokenWithSchema(token: Buffer, expected?: { digest: Buffer; hashAlgorithm: HashName }): TimestampTokenInfo {
  const parsed = parseSignedData(token, 'TSA_FAILED', 'The timestamp token');
  const { tstInfo, der } = tstInfoOf(parsed, 'TSA_FAILED');
  const hashAlgorithm = hashNameOf(tstInfo.messageImprint.hashAlgorithm.algorithmId);
  if (!hashAlgorithm) throw new SingpassFlowsError('TSA_FAILED', 'The timestamp token uses an unsupported hash algorithm');
  const hashedMessage = Buffer.from(tstInfo.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (expected && (hashAlgorithm !== expected.hashAlgorithm || !hashedMessage.equals(expected.digest))) {
    throw new SingpassFlowsError('TSA_FAILED', 'The timestamp token covers different data than requested (message imprint mismatch)');
  }
  const check = checkSignerInfo(parsed, (h) => digest(h, der));
  if (!check.signerCertificate) throw new SingpassFlowsError('TSA_FAILED', 'The timestamp token does not include the TSA certificate');
  if (!check.messageDigestMatches || !check.signatureValid || check.contentType !== OID.tstInfo) {
    throw new SingpassFlowsError('TSA_FAILED', `The timestamp token signature does not verify (${check.problems.join(', ') || 'content type'})`);
  }
  if (!extendedKeyUsages(check.signerCertificate).includes(OID.kpTimeStamping)) {
    throw new SingpassFlowsError('TSA_FAILED', `The certificate that signed the timestamp (${subjectString(check.signerCertificate)}) is not a timestamping certificate`);
  }
  const certificates = parsed.certificates.map(certDer);
  return {
    genTime: tstInfo.genTime,
    policy: tstInfo.policy,
    serialHex: Buffer.from(tstInfo.serialNumber.valueBlock.valueHexView).toString('hex').toUpperCase(),
    hashAlgorithm,
    hashedMessage,
    nonce: tstInfo.nonce ? Buffer.from(tstInfo.nonce.valueBlock.valueHexView) : undefined,
    tsaCertificate: certDer(check.signerCertificate),
    certificates,
  };
}

/**
 * Some TSAs (pkijs-based ones among them) send the TSTInfo as a constructed (BER) OCTET STRING. PDF tools and
 * strict parsers expect DER, so rewrite just that node as a primitive OCTET STRING. The TSA signature covers the
 * signed attributes (which hold the digest of the TSTInfo bytes), not this wrapping, so it stays valid; the token
 * is re-checked afterwards anyway. Everything else keeps the TSA's bytes.
 */
export function derEncapsulatedContent(token: Buffer): Buffer {
  const asn = asn1js.fromBER(toArrayBuffer(token), BER_OPTIONS);
  if (asn.offset === -1) return token;
  try {
    const ci = asn.result as asn1js.Sequence;
    const sd = (ci.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
    const encap = sd.valueBlock.value[2] as asn1js.Sequence;
    const wrapper = encap.valueBlock.value[1] as asn1js.Constructed | undefined;
    const eContent = wrapper?.valueBlock.value[0];
    if (!wrapper || !(eContent instanceof asn1js.OctetString) || !eContent.idBlock.isConstructed) return token;
    const flat = Buffer.concat((eContent.valueBlock.value as asn1js.OctetString[]).map((p) => Buffer.from(p.valueBlock.valueHexView)));
    const eContentDer = Buffer.from(new asn1js.OctetString({ valueHex: toArrayBuffer(flat) }).toBER(false));
    const raw = (b: asn1js.AsnType): Buffer => Buffer.from(b.valueBeforeDecodeView);
    const tlv = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
    const encapDer = tlv(0x30, Buffer.concat([raw(encap.valueBlock.value[0]), tlv(0xa0, eContentDer)]));
    const sdParts = sd.valueBlock.value.map((v, i) => (i === 2 ? encapDer : raw(v)));
    const sdDer = tlv(0x30, Buffer.concat(sdParts));
    return tlv(0x30, Buffer.concat([raw(ci.valueBlock.value[0]), tlv(0xa0, sdDer)]));
  } catch {
    return token;
  }
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
