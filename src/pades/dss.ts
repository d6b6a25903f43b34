/**
 * The Document Security Store (PAdES B-LT, ETSI EN 319 142-1 5.4): certificates, OCSP responses and CRLs added to
 * the catalog's /DSS in a new incremental update, merged with any existing store.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { SingpassFlowsError, invalidInput } from '../errors';
import { PdfDict, PdfObject, PdfRef, PdfStream, dict, name } from './pdf/objects';
import { PdfReader, decodeStream } from './pdf/reader';
import { IncrementalUpdate } from './pdf/writer';

export interface DssEntry {
  certs?: Buffer[];
  ocsps?: Buffer[];
  crls?: Buffer[];
}

export interface DssData {
  certs: Buffer[];
  ocsps: Buffer[];
  crls?: Buffer[];
  /** Per-signature validation data, keyed by upper-case hex SHA-1 of the signature's raw /Contents (`vriKey`). */
  vri?: Record<string, DssEntry>;
}

type Kind = 'Certs' | 'OCSPs' | 'CRLs';
const VRI_KEYS: Record<Kind, string> = { Certs: 'Cert', OCSPs: 'OCSP', CRLs: 'CRL' };

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function checkBuffers(field: string, v: unknown): Buffer[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((b) => Buffer.isBuffer(b) && b.length > 0)) throw invalidInput(field, 'expected an array of DER byte buffers');
  return v as Buffer[];
}

/**
 * Appends a DSS update. Existing entries are kept and identical items are not stored twice.
 *
 * @example
 * const ltv = await appendDss(signedPdf, { certs: [userCert, intermediate], ocsps: [ocspDer], vri: { [sig.vriKey]: { ocsps: [ocspDer] } } });
 */
export async function appendDss(pdf: Buffer, data: DssData): Promise<Buffer> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  if (!data || typeof data !== 'object') throw invalidInput('data', 'expected { certs, ocsps, crls?, vri? }');
  const input: Record<Kind, Buffer[]> = {
    Certs: checkBuffers('certs', data.certs),
    OCSPs: checkBuffers('ocsps', data.ocsps),
    CRLs: checkBuffers('crls', data.crls),
  };
  const reader = PdfReader.open(pdf);
  if (reader.trailer.get('Encrypt') !== undefined) {
    throw new SingpassFlowsError('PDF_ENCRYPTED', 'The PDF is encrypted; validation data cannot be added.', { retryable: false });
  }
  const update = new IncrementalUpdate(reader);
  const catalog = reader.catalog();
  const dssRef = catalog.get('DSS');
  const old = reader.resolveDict(dssRef);
  const dss = old ? old.clone() : dict({ Type: name('DSS') });

  // Existing items by content hash, so re-adding the same certificate reuses its stream.
  const known: Record<Kind, Map<string, PdfRef>> = { Certs: new Map(), OCSPs: new Map(), CRLs: new Map() };
  const arrays: Record<Kind, PdfObject[]> = { Certs: [], OCSPs: [], CRLs: [] };
  for (const kind of Object.keys(known) as Kind[]) {
    arrays[kind] = [...(reader.resolveArray(old?.get(kind)) ?? [])];
    for (const item of arrays[kind]) {
      const s = reader.resolve(item);
      if (item instanceof PdfRef && s instanceof PdfStream) {
        try {
          known[kind].set(sha256(decodeStream(s)), item);
        } catch {
          // undecodable existing entry: keep it, just do not dedupe against it
        }
      }
    }
  }
  const refOf = (kind: Kind, der: Buffer): PdfRef => {
    const h = sha256(der);
    let ref = known[kind].get(h);
    if (!ref) {
      ref = update.add(new PdfStream(dict({ Filter: name('FlateDecode') }), deflateSync(der)));
      known[kind].set(h, ref);
      arrays[kind].push(ref);
    }
    return ref;
  };
  for (const kind of Object.keys(input) as Kind[]) for (const der of input[kind]) refOf(kind, der);

  if (data.vri !== undefined) {
    if (typeof data.vri !== 'object' || data.vri === null) throw invalidInput('vri', 'expected an object keyed by signature SHA-1');
    const vri = reader.resolveDict(old?.get('VRI'))?.clone() ?? new PdfDict();
    for (const [key, entry] of Object.entries(data.vri)) {
      const k = key.toUpperCase();
      if (!/^[0-9A-F]{40}$/.test(k)) throw invalidInput('vri', 'keys must be hex SHA-1 digests (40 characters)');
      const e = reader.resolveDict(vri.get(k))?.clone() ?? new PdfDict();
      for (const kind of Object.keys(input) as Kind[]) {
        const items = checkBuffers(`vri.${k}.${kind.toLowerCase()}`, entry?.[kind.toLowerCase() as keyof DssEntry]);
        if (!items.length) continue;
        const existing = reader.resolveArray(e.get(VRI_KEYS[kind])) ?? [];
        const refs = items.map((der) => refOf(kind, der));
        const have = new Set(existing.filter((r): r is PdfRef => r instanceof PdfRef).map((r) => r.key));
        e.set(VRI_KEYS[kind], [...existing, ...refs.filter((r) => !have.has(r.key))]);
      }
      vri.set(k, e);
    }
    dss.set('VRI', vri);
  }
  for (const kind of Object.keys(arrays) as Kind[]) {
    if (arrays[kind].length) dss.set(kind, arrays[kind]);
  }

  // PDF 1.7 files announce the DSS with the ESIC developer extension (level 5), as ETSI EN 319 142-1 asks.
  const extensions = reader.resolveDict(catalog.get('Extensions'));
  const needsEsic = !reader.version.startsWith('2.') && !extensions?.has('ESIC');
  if (dssRef instanceof PdfRef && old && !needsEsic) update.replace(dssRef, dss);
  else {
    const newCatalog = catalog.clone();
    if (dssRef instanceof PdfRef && old) update.replace(dssRef, dss);
    else newCatalog.set('DSS', update.add(dss));
    if (needsEsic) {
      const ext = extensions ? extensions.clone() : new PdfDict();
      ext.set('ESIC', dict({ BaseVersion: name('1.7'), ExtensionLevel: 5 }));
      newCatalog.set('Extensions', ext);
    }
    update.replace(reader.rootRef, newCatalog);
  }
  return Buffer.concat([pdf, update.build().bytes]);
}

/** The DSS contents (decoded DER items), empty when the PDF has none. */
export function readDss(pdf: Buffer): Required<DssData> {
  const reader = PdfReader.open(pdf);
  const dss = reader.resolveDict(reader.catalog().get('DSS'));
  const items = (o: PdfObject | undefined): Buffer[] =>
    (reader.resolveArray(o) ?? []).flatMap((i) => {
      const s = reader.resolve(i);
      return s instanceof PdfStream ? [decodeStream(s)] : [];
    });
  const vri: Record<string, DssEntry> = {};
  const vriDict = reader.resolveDict(dss?.get('VRI'));
  for (const [k, v] of vriDict?.map ?? []) {
    const e = reader.resolveDict(v);
    if (e) vri[k] = { certs: items(e.get('Cert')), ocsps: items(e.get('OCSP')), crls: items(e.get('CRL')) };
  }
  return { certs: items(dss?.get('Certs')), ocsps: items(dss?.get('OCSPs')), crls: items(dss?.get('CRLs')), vri };
}
