/** Minimal session records at a phase, for the pure rules over records (nextStep, isDeliveryStillNeeded). */
import type { SessionRecord } from '../../src/session';

export const T = 1_800_000_000; // UNIX seconds

export function record(status: SessionRecord['state']['status'], patch: Partial<SessionRecord> = {}, state: Partial<SessionRecord['state']> = {}): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1',
    state: { version: 1, signRef: 'ref', expiresAt: T + 120, status, challengeCode: '0427', clientNotificationToken: 't', updatedAt: T, ...state },
    request: { documentName: 'a.pdf', level: 'B-T' },
    document: { length: 1, sha256: '00' },
    revision: 3,
    ...patch,
  } as SessionRecord;
}

export const prepared = { fieldName: 'Signature1' } as unknown as SessionRecord['prepared'];
