import type { PoolClient, PoolConfig } from 'pg';
import { SingpassFlowsError } from '../../errors';
import { DocumentCache } from '../document-cache';
import { PgConnection, ref, type PgSessionStoreOptions, type PoolLike } from './connection';

/**
 * The PostgreSQL store's PDFs: the one being signed (`<prefix>documents`, apart from the record so that listing never
 * reads megabytes) and the signed one (`<prefix>signed_documents`, written before the record says completed).
 */
export class PgDocuments extends PgConnection {
  /** PDFs written or read here lately, by the row version they were at (a step asks for the version, not the PDF). */
  protected readonly documents: DocumentCache;

  constructor(connection: string | PoolConfig | PoolLike, options: PgSessionStoreOptions = {}) {
    super(connection, options);
    this.documents = new DocumentCache(options.documentCache === false ? { maxBytes: 0 } : options.documentCache);
  }

  /**
   * The session's PDF. One this process wrote or read lately is served from memory once the row is found still at the
   * version it had then (a few bytes asked for instead of the PDF, which node-postgres reads as hex text).
   */
  async getDocument(signRef: string): Promise<Buffer | undefined> {
    const r = ref(signRef);
    if (this.documents.versionOf(r) !== undefined) {
      const rows = await this.query<{ v: string }>('check a session\'s PDF', `SELECT ${DOCUMENT_VERSION} AS v FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
      if (!rows[0]) {
        this.documents.delete(r);
        return undefined;
      }
      const kept = this.documents.get(r, rows[0].v);
      if (kept) return kept;
    }
    const rows = await this.query<{ pdf: Buffer; v: string }>('load a session\'s PDF', `SELECT pdf, ${DOCUMENT_VERSION} AS v FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
    if (rows[0]) this.documents.set(r, rows[0].v, rows[0].pdf);
    return rows[0]?.pdf;
  }

  async putDocument(signRef: string, pdf: Buffer): Promise<void> {
    const r = ref(signRef);
    this.documents.set(r, await this.withClient('save a session\'s PDF', (c) => this.writeDocument(c, r, pdf)), Buffer.from(pdf));
  }

  async deleteDocument(signRef: string): Promise<void> {
    const r = ref(signRef);
    this.documents.delete(r);
    await this.query('delete a session\'s PDF', `DELETE FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
  }

  /** The signed PDF, stored before the record says completed (kept with the record until `cleanUp`). */
  async putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    if (!Buffer.isBuffer(pdf)) throw new SingpassFlowsError('INVALID_INPUT', 'document: the signed PDF must be a Buffer', { field: 'document' });
    await this.query('save a signed PDF', `INSERT INTO ${this.t.signedDocuments} (sign_ref, pdf) VALUES ($1, $2)
      ON CONFLICT (sign_ref) DO UPDATE SET pdf = EXCLUDED.pdf, written_at = now()`, [ref(signRef), pdf]);
  }

  async getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    const rows = await this.query<{ pdf: Buffer }>('load a signed PDF', `SELECT pdf FROM ${this.t.signedDocuments} WHERE sign_ref = $1`, [ref(signRef)]);
    return rows[0]?.pdf;
  }

  /** Writes the session's PDF; resolves with the row's version (see DOCUMENT_VERSION). */
  protected async writeDocument(c: PoolClient, signRef: string, pdf: Buffer): Promise<string> {
    if (!Buffer.isBuffer(pdf)) throw new SingpassFlowsError('INVALID_INPUT', 'document: the PDF must be a Buffer', { field: 'document' });
    const r = await c.query<{ v: string }>(`INSERT INTO ${this.t.documents} (sign_ref, pdf) VALUES ($1, $2)
      ON CONFLICT (sign_ref) DO UPDATE SET pdf = EXCLUDED.pdf, written_at = now() RETURNING ${DOCUMENT_VERSION} AS v`, [signRef, pdf]);
    return r.rows[0].v;
  }
}

/**
 * A document row's version: when it was written (µs) and its size. Compared for equality only, to tell whether a PDF
 * kept in memory is still the row's (a rewrite gets a new `written_at`).
 */
const DOCUMENT_VERSION = `(extract(epoch FROM written_at) * 1000000)::bigint || ':' || octet_length(pdf)`;
