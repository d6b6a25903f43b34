import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { errno, removeFile } from '../../files';
import { FolderBase, ref } from './base';

/** How the store names a session's signed PDF. */
export const SIGNED_SUFFIX = '-signed.pdf';

/** The folder store's PDFs: `<signRef>.pdf` (being signed) and `<signRef>-signed.pdf` (the product), written atomically. */
export class FolderDocuments extends FolderBase {
  /** `<dir>/<signRef>.pdf`, the PDF being signed. */
  documentPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}.pdf`);
  }

  async getDocument(signRef: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(this.documentPath(signRef));
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
  }

  async putDocument(signRef: string, pdf: Buffer): Promise<void> {
    await this.ensureDir();
    await this.writeAtomic(`${ref(signRef)}.pdf`, pdf);
  }

  async deleteDocument(signRef: string): Promise<void> {
    await removeFile(this.documentPath(signRef));
  }

  /** The signed PDF as `<signRef>-signed.pdf` (atomic; kept by cleanUp unless the store forgets signed copies). */
  async putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    await this.ensureDir();
    await this.writeAtomic(`${ref(signRef)}${SIGNED_SUFFIX}`, pdf);
  }

  /** `<dir>/<signRef>-signed.pdf`, the signed PDF. */
  signedDocumentPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}${SIGNED_SUFFIX}`);
  }

  async getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(this.signedDocumentPath(signRef));
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
  }
}
