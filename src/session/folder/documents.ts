import * as path from 'node:path';
import { readFileIfExists, removeFile } from '../../files';
import { FolderBase, ref } from './base';

/** How the store names a session's signed PDF. */
export const SIGNED_SUFFIX = '-signed.pdf';

/** The folder store's PDFs: `<signRef>.pdf` (being signed) and `<signRef>-signed.pdf` (the product), written atomically. */
export class FolderDocuments extends FolderBase {
  /** `<dir>/<signRef>.pdf`, the PDF being signed. */
  documentPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}.pdf`);
  }

  getDocument(signRef: string): Promise<Buffer | undefined> {
    return readFileIfExists(this.documentPath(signRef));
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

  getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    return readFileIfExists(this.signedDocumentPath(signRef));
  }
}
