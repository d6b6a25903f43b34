import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { readPdf } from '../../../shared/binary';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { readRecord } from '../../../shared/session-data';
import { recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('sessionRecord', 'saveRecord', [
  ...storeInputs,
  { ...recordInput, description: 'The record a Singpass Sign session step output (its "record")' },
  {
    displayName: 'Save As',
    name: 'saveAs',
    type: 'options',
    options: [
      { name: 'New Record (After Create Session)', value: 'new', description: 'Refused when a record with this signRef exists' },
      { name: 'Update of the Loaded Record', value: 'update', description: 'Refused unless the stored record is still the one this execution loaded (its revision)' },
    ],
    default: 'update',
  },
  {
    displayName: 'Loaded Revision',
    name: 'expectedRevision',
    type: 'number',
    default: 0,
    required: true,
    displayOptions: { show: { saveAs: ['update'] } },
    placeholder: "={{ $('Load Session Record').item.json.revision }}",
    hint: 'The "revision" output of the Load Session Record (or List Due Sessions) node this execution started from',
    description: 'The save is refused (saved: false, outcome "conflict") when the stored record\'s revision is not this one: another execution changed the session first, and its record is kept',
  },
  {
    displayName: 'Also Save PDF From Binary Field',
    name: 'pdfBinaryField',
    type: 'string',
    default: '',
    placeholder: 'data',
    description: 'Binary property holding the PDF being signed, saved next to the record (named after the signRef) (Create Session\'s PDF). Empty: the record only.',
  },
]);

/**
 * Save a session record as `<folder>/<signRef>.json`: atomically (temporary file, fsync, rename: never a partial
 * file, even if n8n dies mid-write) and with compare-and-set on its revision, under a lock file, so two executions
 * can never overwrite each other's state. A refused save is an output, not an error: `saved: false`, `outcome`
 * (`conflict`, `exists`, `missing`) and the stored record's revision and status.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  const saveAs = this.getNodeParameter('saveAs', i, 'update') as string;
  let expected: number | undefined;
  if (saveAs === 'update') {
    const raw = this.getNodeParameter('expectedRevision', i);
    expected = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : (raw as number);
    if (typeof expected !== 'number' || !Number.isInteger(expected) || expected < 1) {
      throw invalidInput('Loaded Revision', 'give the "revision" the Load Session Record node output for this session (a whole number ≥ 1)');
    }
  }
  const pdfField = String(this.getNodeParameter('pdfBinaryField', i, '') ?? '').trim();
  const document = pdfField ? (await readPdf(this, i, pdfField)).pdf : undefined;
  const store = await sessionRecordStore(this, i);
  const r = await store.save(record, expected, { document });
  const json: IDataObject = r.saved
    ? { saved: true, outcome: 'saved', signRef: r.signRef, status: r.status, revision: r.revision }
    : {
      saved: false, outcome: r.reason, signRef: r.signRef, status: record.state.status,
      ...(r.expectedRevision !== undefined ? { expectedRevision: r.expectedRevision } : {}),
      ...(r.storedRevision !== undefined ? { storedRevision: r.storedRevision, storedStatus: r.storedStatus } : {}),
      message: r.reason === 'conflict'
        ? `Not saved: the stored record is at revision ${r.storedRevision} (${r.storedStatus}), not the revision ${r.expectedRevision} this execution loaded; another execution changed the session first, its record is kept`
        : r.reason === 'exists'
          ? `Not saved: a record for ${r.signRef} exists already (revision ${r.storedRevision}, ${r.storedStatus})`
          : `Not saved: there is no stored record for ${r.signRef} to update (deleted, or never saved as new)`,
    };
  return { json, binary: item.binary };
}
