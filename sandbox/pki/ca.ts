import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  derToPem, generateKey, issueCertificate, normalizeSerialHex, parseCertificate, pemToDer, randomSerial, wholeSeconds,
  type KeyCurve, type NameSpec,
} from './x509';

const DAY = 86_400_000;
const YEAR = 365 * DAY;

/** Policy OID of the sandbox TSA (a made-up arc under the "example" 2.999 OID root: never a real policy). */
export const SANDBOX_TSA_POLICY = '2.999.1065.1.1';
/** Policy OID put in sandbox user certificates. */
export const SANDBOX_USER_POLICY = '2.999.1065.1.2';

/** One issued certificate and its private key (test material only). */
export interface IssuedCert {
  certDer: Buffer;
  certPem: string;
  privateKey: crypto.KeyObject;
  privateKeyPem: string;
  /** Lowercase hex, no leading zero bytes. */
  serialHex: string;
  /** e.g. `C=SG, CN=Tan Ah Kow, serialNumber=S1234567D` (encoding order). */
  subject: string;
}

export type CaName = 'root' | 'intermediate';
export type CertStatus = 'good' | 'revoked' | 'unknown';
/** RFC 5280 CRLReason names (the codes OCSP puts in revocationReason). */
export const REVOCATION_REASONS = {
  unspecified: 0, keyCompromise: 1, cACompromise: 2, affiliationChanged: 3, superseded: 4, cessationOfOperation: 5,
  certificateHold: 6, removeFromCRL: 8, privilegeWithdrawn: 9, aACompromise: 10,
} as const;
export type RevocationReason = keyof typeof REVOCATION_REASONS;

/** What the CA database knows about a serial number. */
export interface CertRecord {
  serialHex: string;
  issuer: CaName;
  subject: string;
  revokedAt?: Date;
  reason?: RevocationReason;
}

export interface IssueUserOptions {
  curve: KeyCurve;
  commonName: string;
  /** Singpass-style UIN/FIN put in the subject serialNumber attribute; a valid-looking test value when omitted. */
  serialNumber?: string;
  /** Validity period; default from a day ago for two years (an expired or not-yet-valid user for tests). */
  notBefore?: Date;
  notAfter?: Date;
  /** Self-signed instead of issued by the intermediate CA: a certificate no DSAP should trust (not in the CA database). */
  selfSigned?: boolean;
}

export interface TestPki {
  baseUrl: string;
  /** The OCSP URL written in AIA extensions (`${baseUrl}/ca/ocsp` unless overridden). */
  ocspUrl: string;
  root: IssuedCert;
  intermediate: IssuedCert;
  tsa: IssuedCert;
  /** Delegated OCSP responders (EKU OCSPSigning + ocsp-nocheck), one per CA: each signs answers about its CA's certs. */
  ocspSigners: { root: IssuedCert; intermediate: IssuedCert };
  users: { p256: IssuedCert; p384: IssuedCert; revoked: IssuedCert; rsa?: IssuedCert };
  tsaPolicy: string;
  /** Issue a Singpass-like signing certificate from the intermediate CA (persisted in `dir` when set). */
  issueUserCertificate(opts: IssueUserOptions): Promise<IssuedCert>;
  /** Mark a certificate revoked (now, or at `at`). Throws for a serial this PKI never issued. */
  revoke(serialHex: string, reason?: RevocationReason, at?: Date): void;
  statusOf(serialHex: string): CertStatus;
  /** CA database lookup (undefined = never issued by this PKI). */
  lookup(serialHex: string): CertRecord | undefined;
  /** Every certificate issued by either CA (copies), e.g. to build an OpenSSL `index.txt`. */
  records(): CertRecord[];
}

export interface CreateTestPkiOptions {
  /** e.g. `http://127.0.0.1:PORT` (no trailing slash); AIA URLs are built from it. */
  baseUrl: string;
  /** Override the AIA OCSP URL (e.g. to point at an OpenSSL responder). */
  ocspUrl?: string;
  /** Persist PEMs + CA database here and reload them on the next start. */
  dir?: string;
  /** Also create `users.rsa` (RSA-2048). Default true. */
  rsaUser?: boolean;
}

interface StoredEntity { certPem: string; keyPem: string }
interface StoredRecord { issuer: CaName; subject: string; revokedAt?: string; reason?: RevocationReason }
interface StoredState {
  version: 1;
  baseUrl: string;
  ocspUrl: string;
  entities: Record<string, StoredEntity>;
  records: Record<string, StoredRecord>;
}

const STATE_FILE = 'pki-state.json';

const ORG = 'Singpass Flows Sandbox (TEST ONLY)';

function subjectText(n: NameSpec): string {
  const parts: string[] = [];
  if (n.C) parts.push(`C=${n.C}`);
  if (n.O) parts.push(`O=${n.O}`);
  if (n.OU) parts.push(`OU=${n.OU}`);
  parts.push(`CN=${n.CN}`);
  if (n.serialNumber) parts.push(`serialNumber=${n.serialNumber}`);
  return parts.join(', ');
}

function toIssued(certDer: Buffer, key: crypto.KeyObject, serialHex: string, subject: string): IssuedCert {
  return {
    certDer, certPem: derToPem(certDer), privateKey: key,
    privateKeyPem: key.export({ format: 'pem', type: 'pkcs8' }).toString(), serialHex, subject,
  };
}

/** A NRIC-shaped test identifier with a correct check letter (S/T series), so validators that check it accept it. */
export function testNric(seed = crypto.randomInt(0, 10_000_000)): string {
  const digits = String(seed).padStart(7, '0');
  const weights = [2, 7, 6, 5, 4, 3, 2];
  const sum = [...digits].reduce((acc, d, i) => acc + Number(d) * weights[i], 0);
  return 'S' + digits + 'JZIHGFEDCBA'[sum % 11];
}

/**
 * Create (or reload from `dir`) the sandbox's national test PKI: root CA (P-384), intermediate "signing" CA (P-256),
 * one delegated OCSP responder per CA, a TSA and a few Singpass-like user signing certificates.
 *
 * Reload rule: the root (key + certificate) and the CA database (revocations) always survive. When the stored URLs
 * differ from the requested ones (a new ephemeral port), everything below the root is re-issued with the same keys and
 * names so AIA URLs point at the live server, while old serials keep their status.
 */
export async function createTestPki(opts: CreateTestPkiOptions): Promise<TestPki> {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const ocspUrl = opts.ocspUrl ?? `${baseUrl}/ca/ocsp`;
  const dir = opts.dir;
  const statePath = dir ? path.join(dir, STATE_FILE) : undefined;
  let stored: StoredState | undefined;
  if (statePath && fs.existsSync(statePath)) {
    try {
      stored = JSON.parse(fs.readFileSync(statePath, 'utf8')) as StoredState;
    } catch {
      throw new Error(`cannot read the sandbox PKI state ${statePath}: delete it to start a fresh test PKI`);
    }
    if (stored?.version !== 1 || typeof stored.entities !== 'object' || typeof stored.records !== 'object') {
      throw new Error(`unsupported sandbox PKI state in ${statePath}: delete it to start a fresh test PKI`);
    }
  }
  const reuseAll = !!stored && stored.baseUrl === baseUrl && stored.ocspUrl === ocspUrl;

  const records = new Map<string, CertRecord>();
  for (const [serial, r] of Object.entries(stored?.records ?? {})) {
    records.set(serial, { serialHex: serial, issuer: r.issuer, subject: r.subject, reason: r.reason, revokedAt: r.revokedAt ? new Date(r.revokedAt) : undefined });
  }
  const entities: Record<string, StoredEntity> = {};

  const now = Date.now();
  const notBefore = wholeSeconds(now - DAY);

  const issue = async (
    name: string,
    spec: {
      subject: NameSpec; curve: KeyCurve; issuer?: IssuedCert; issuerName?: CaName; years: number;
      ca?: { pathLen?: number }; keyUsage: Parameters<typeof issueCertificate>[0]['keyUsage'];
      extKeyUsage?: { oids: string[]; critical: boolean }; ocspNoCheck?: boolean; aia?: { caIssuers?: string; ocsp?: string };
      policies?: string[]; reuse: boolean;
    },
  ): Promise<IssuedCert> => {
    const previous = stored?.entities[name];
    if (spec.reuse && previous) {
      const cert = await parseCertificate(pemToDer(previous.certPem));
      const serialHex = normalizeSerialHex(Buffer.from(cert.serialNumber.valueBlock.valueHexView).toString('hex'));
      entities[name] = previous;
      return toIssued(pemToDer(previous.certPem), crypto.createPrivateKey(previous.keyPem), serialHex, subjectText(spec.subject));
    }
    // Keep the key of a re-issued entity: OCSP CertIDs of already issued certificates hash the issuer key.
    const key = previous ? crypto.createPrivateKey(previous.keyPem) : await generateKey(spec.curve);
    const serial = randomSerial();
    const issuerCert = spec.issuer ? await parseCertificate(spec.issuer.certDer) : undefined;
    const der = await issueCertificate({
      subject: spec.subject, serial, publicKey: key, notBefore, notAfter: wholeSeconds(now + spec.years * YEAR),
      issuer: issuerCert, issuerKey: spec.issuer?.privateKey ?? key, ca: spec.ca, keyUsage: spec.keyUsage,
      extKeyUsage: spec.extKeyUsage, ocspNoCheck: spec.ocspNoCheck, aia: spec.aia, policies: spec.policies,
    });
    const issued = toIssued(der, key, normalizeSerialHex(serial.toString('hex')), subjectText(spec.subject));
    entities[name] = { certPem: issued.certPem, keyPem: issued.privateKeyPem };
    if (spec.issuerName) records.set(issued.serialHex, { serialHex: issued.serialHex, issuer: spec.issuerName, subject: issued.subject });
    return issued;
  };

  const root = await issue('root', {
    subject: { C: 'SG', O: ORG, CN: 'Singpass Flows Sandbox Root CA' }, curve: 'P-384', years: 10,
    ca: {}, keyUsage: ['keyCertSign', 'cRLSign'], reuse: true,
  });
  const intermediate = await issue('intermediate', {
    subject: { C: 'SG', O: ORG, CN: 'Singpass Flows Sandbox Signing CA' }, curve: 'P-256', issuer: root, issuerName: 'root',
    years: 2, ca: { pathLen: 0 }, keyUsage: ['keyCertSign', 'cRLSign'],
    aia: { caIssuers: `${baseUrl}/ca/root.crt`, ocsp: ocspUrl }, reuse: reuseAll,
  });
  const responder = (issuer: IssuedCert, issuerName: CaName, cn: string) =>
    issue(`ocsp-${issuerName}`, {
      subject: { C: 'SG', O: ORG, CN: cn }, curve: 'P-256', issuer, issuerName, years: 2, keyUsage: ['digitalSignature'],
      extKeyUsage: { oids: ['1.3.6.1.5.5.7.3.9'], critical: false }, ocspNoCheck: true, reuse: reuseAll,
    });
  const ocspRoot = await responder(root, 'root', 'Singpass Flows Sandbox Root CA OCSP Responder');
  const ocspIntermediate = await responder(intermediate, 'intermediate', 'Singpass Flows Sandbox Signing CA OCSP Responder');
  const leafAia = { caIssuers: `${baseUrl}/ca/intermediate.crt`, ocsp: ocspUrl };
  const tsa = await issue('tsa', {
    subject: { C: 'SG', O: ORG, CN: 'Singpass Flows Sandbox Time Stamping Authority' }, curve: 'P-256', issuer: intermediate,
    issuerName: 'intermediate', years: 2, keyUsage: ['digitalSignature', 'nonRepudiation'],
    extKeyUsage: { oids: ['1.3.6.1.5.5.7.3.8'], critical: true }, aia: leafAia, reuse: reuseAll,
  });
  const user = (name: string, curve: KeyCurve, cn: string, uinfin: string) =>
    issue(`user-${name}`, {
      subject: { C: 'SG', CN: cn, serialNumber: uinfin }, curve, issuer: intermediate, issuerName: 'intermediate', years: 2,
      keyUsage: ['digitalSignature', 'nonRepudiation'], aia: leafAia, policies: [SANDBOX_USER_POLICY], reuse: reuseAll,
    });
  const users: TestPki['users'] = {
    p256: await user('p256', 'P-256', 'TAN AH KOW', testNric(1234567)),
    p384: await user('p384', 'P-384', 'LIM BEE LENG', testNric(7654321)),
    revoked: await user('revoked', 'P-256', 'REVOKED TEST USER', testNric(1)),
  };
  if (opts.rsaUser !== false) users.rsa = await user('rsa', 'RSA-2048', 'RSA TEST USER', testNric(2));

  const persist = () => {
    if (!dir || !statePath) return;
    const state: StoredState = {
      version: 1, baseUrl, ocspUrl, entities,
      records: Object.fromEntries([...records.values()].map((r) => [r.serialHex, {
        issuer: r.issuer, subject: r.subject, revokedAt: r.revokedAt?.toISOString(), reason: r.reason,
      }])),
    };
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${statePath}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(state, null, 2), { mode: 0o600 });
    fs.renameSync(tmp, statePath);
  };

  const revoke = (serialHex: string, reason: RevocationReason = 'unspecified', at?: Date) => {
    const rec = records.get(normalizeSerialHex(serialHex));
    if (!rec) throw new Error(`serial ${serialHex} was not issued by this test PKI`);
    if (!(reason in REVOCATION_REASONS)) throw new Error(`unknown revocation reason ${reason}`);
    rec.revokedAt = wholeSeconds((at ?? new Date()).getTime());
    rec.reason = reason;
    persist();
  };
  if (!records.get(users.revoked.serialHex)?.revokedAt) revoke(users.revoked.serialHex, 'keyCompromise');

  const pki: TestPki = {
    baseUrl, ocspUrl, root, intermediate, tsa, ocspSigners: { root: ocspRoot, intermediate: ocspIntermediate }, users,
    tsaPolicy: SANDBOX_TSA_POLICY,
    async issueUserCertificate(o) {
      if (!o.commonName || o.commonName.length > 64) throw new Error('commonName must be 1..64 characters');
      if (o.serialNumber !== undefined && !/^[A-Za-z0-9 '()+,\-./:=?]{1,64}$/.test(o.serialNumber)) {
        throw new Error('serialNumber must be 1..64 PrintableString characters (e.g. S1234567D)');
      }
      if (!['P-256', 'P-384', 'RSA-2048'].includes(o.curve)) throw new Error(`unsupported curve ${String(o.curve)}`);
      const key = await generateKey(o.curve);
      const serial = randomSerial();
      const subject: NameSpec = { C: 'SG', CN: o.commonName, serialNumber: o.serialNumber ?? testNric() };
      const der = await issueCertificate({
        subject, serial, publicKey: key,
        notBefore: wholeSeconds(o.notBefore?.getTime() ?? Date.now() - DAY), notAfter: wholeSeconds(o.notAfter?.getTime() ?? Date.now() + 2 * YEAR),
        issuer: o.selfSigned ? undefined : await parseCertificate(intermediate.certDer), issuerKey: o.selfSigned ? key : intermediate.privateKey,
        keyUsage: ['digitalSignature', 'nonRepudiation'], aia: o.selfSigned ? undefined : leafAia, policies: [SANDBOX_USER_POLICY],
      });
      const issued = toIssued(der, key, normalizeSerialHex(serial.toString('hex')), subjectText(subject));
      if (o.selfSigned) return issued;
      records.set(issued.serialHex, { serialHex: issued.serialHex, issuer: 'intermediate', subject: issued.subject });
      persist();
      return issued;
    },
    revoke,
    statusOf(serialHex) {
      const rec = records.get(normalizeSerialHex(serialHex));
      return !rec ? 'unknown' : rec.revokedAt ? 'revoked' : 'good';
    },
    lookup(serialHex) {
      const rec = records.get(normalizeSerialHex(serialHex));
      return rec ? { ...rec } : undefined;
    },
    records() {
      return [...records.values()].map((r) => ({ ...r }));
    },
  };
  persist();
  return pki;
}
