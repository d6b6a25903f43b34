import * as path from 'node:path';
import { SingpassFlowsError } from '../../errors';
import { readFileIfExists, removeFile } from '../../files';
import { isSessionEnded } from '../next-step';
import { withPhase } from '../transitions';
import type { SessionRecord } from '../types';
import { busy, fileStoreError, isSignRef, ref } from './base';
import { FolderDeliveries } from './deliveries';

/**
 * The folder store's records: `<signRef>.json`, the record as the JSON a step output (users and tests may read it).
 * `save` is compare-and-set on `record.revision` under the record's lock file: it reads the stored revision,
 * refuses (a typed {@link SaveOutcome}, no exception) when it is not the one the caller loaded, else writes and
 * renames.
 */
export abstract class FolderRecords extends FolderDeliveries {

  async get(signRef: string): Promise<SessionRecord | undefined> {
    const file = this.recordPath(signRef);
    let text: string | undefined;
    try {
      text = await readFileIfExists(file, 'utf8');
    } catch (e) {
      // typed here, so a folder replaced by a file or without rights reads as STORE_FAILED, not as a passing fault
      throw fileStoreError(e, this.dir, `read the record of ${signRef}`);
    }
    return text === undefined ? undefined : parseRecord(text, file);
  }

  /**
   * Compare-and-set: save `record` if the stored record's revision is `expectedRevision` (undefined: no record may
   * exist yet). With `document`, the PDF is saved too (atomically, before the record, under the same lock).
   */
  async save(record: SessionRecord, expectedRevision: number | undefined, options: { document?: Buffer } = {}): Promise<SaveOutcome> {
    if (!record || typeof record !== 'object' || !record.state || typeof record.revision !== 'number') {
      throw new SingpassFlowsError('STATE_INVALID', 'Session Record: pass the "record" a Singpass Sign step output', { field: 'Session Record' });
    }
    const signRef = ref(record.state.signRef);
    const lock = await this.lock(signRef); // creates the folder when missing
    let outcome: SaveOutcome;
    try {
      const current = await this.get(signRef);
      if (expectedRevision === undefined && current) return refused('exists', signRef, expectedRevision, current);
      if (expectedRevision !== undefined && !current) return { saved: false, reason: 'missing', signRef, expectedRevision };
      if (current && current.revision !== expectedRevision) return refused('conflict', signRef, expectedRevision, current);
      if (options.document) await this.writeAtomic(`${signRef}.pdf`, options.document);
      const text = JSON.stringify(withPhase(record));
      // Still ours? (a holder slower than lockStaleMs may have had its lock broken: then it must not write)
      if (!(await lock.held())) throw busy(signRef, 'the record lock was taken over while saving (a save took longer than the stale-lock timeout)');
      await this.writeAtomic(`${signRef}.json`, text);
      outcome = { saved: true, signRef, revision: record.revision, status: record.state.status };
    } finally {
      await lock.release();
    }
    // The session ended (e.g. its certificate refused): a kept certificate event keeps the certificate no longer.
    if (isSessionEnded(record)) await this.markDeliveryApplied(signRef, 'certificate');
    return outcome;
  }

  async put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    return (await this.save(record, expectedRevision)).saved;
  }

  /** Delete the record (under its lock); the PDF stays (see deleteDocument). */
  async delete(signRef: string): Promise<void> {
    const r = ref(signRef);
    const lock = await this.lock(r);
    try {
      await removeFile(this.recordPath(r));
      await this.syncDir();
    } finally {
      await lock.release();
    }
  }

  /** Every stored signRef (the `<signRef>.json` files). */
  async list(): Promise<string[]> {
    return recordRefs(await this.names());
  }
}

/** What a compare-and-set save did. A refusal is a normal outcome: another execution changed the record first. */
export type SaveOutcome =
  | { saved: true; signRef: string; revision: number; status: string }
  | {
    saved: false;
    /** `conflict`: the stored revision is not the expected one; `exists`: a new record's signRef is taken; `missing`: nothing stored to update. */
    reason: 'conflict' | 'exists' | 'missing';
    signRef: string;
    expectedRevision: number | undefined;
    storedRevision?: number;
    storedStatus?: string;
  };

/** The signRefs of the record files (`<signRef>.json`) among a folder's names. */
export function recordRefs(names: string[]): string[] {
  return names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length)).filter(isSignRef);
}


function parseRecord(text: string, file: string): SessionRecord {
  let r: Partial<SessionRecord> | undefined;
  try {
    r = JSON.parse(text) as Partial<SessionRecord>;
  } catch {
    r = undefined;
  }
  if (!r || typeof r !== 'object' || r.format !== 'singpass-flows/signing-session@1' || !r.state || typeof r.revision !== 'number') {
    throw new SingpassFlowsError('STATE_INVALID', `${path.basename(file)} is not a session record (${text.length === 0 ? 'empty' : 'not the JSON a Singpass Sign step output'})`, { field: 'Session Record' });
  }
  // A record written before phases were stored is read with the phase its fields describe.
  return withPhase(r as SessionRecord);
}


function refused(reason: 'conflict' | 'exists', signRef: string, expectedRevision: number | undefined, current: SessionRecord): SaveOutcome {
  return { saved: false, reason, signRef, expectedRevision, storedRevision: current.revision, storedStatus: current.state.status };
}
