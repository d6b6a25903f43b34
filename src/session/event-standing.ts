import type { SigningEvent } from '../sign';
import { constantTimeEqual } from '../secrets';
import { sessionPhase } from './transitions';
import type { SessionRecord } from './types';

/**
 * Where a session stands with a webhook event (the service retries, proxies resend, two processes may get one):
 * - `new`: not in the record: apply it.
 * - `midStep`: a certificate the record holds whose step is not done (claimed, or at the save point): a copy is
 *   answered as one, and applying it continues that step.
 * - `taken`: in the record and its step done: a copy changes nothing.
 */
export type EventStanding = 'new' | 'midStep' | 'taken';

/**
 * THE rule for "did the session already take this event", used by the front door (a copy is answered 200 and
 * nothing runs) and by the engine (a copy applied again is `duplicate: true`, never a second hash): a certificate by
 * its nonce, a signature by its value over the same hash, an error event by its correlation id and code.
 */
export function eventStanding(record: SessionRecord, event: SigningEvent): EventStanding {
  const s = record.state;
  switch (event.type) {
    case 'certificate': {
      if (s.nonce === undefined || !constantTimeEqual(event.nonce, s.nonce)) return 'new';
      const phase = sessionPhase(record);
      return phase === 'certificateClaimed' || phase === 'atSavePoint' ? 'midStep' : 'taken';
    }
    case 'signature':
      return s.signature !== undefined && s.signature === event.signature && s.documentHash === event.documentHash ? 'taken' : 'new';
    case 'error':
      return s.status === 'failed' && s.error?.correlationId === event.correlationId && s.error.code === event.errorCode ? 'taken' : 'new';
  }
}
