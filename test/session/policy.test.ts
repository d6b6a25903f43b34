/**
 * One session policy (src/session/policy.ts) for every front end: the defaults each front end shows or uses for the
 * take-over idle time and the retention are SESSION_POLICY's, so the same record is taken over and forgotten at the
 * same moments in n8n, Node-RED and the CLI.
 */
import { SESSION_POLICY, DEFAULT_RETENTION_MS, DEFAULT_SCAN_EXTENSION_SECONDS } from '../../src/session';
import { description as listDue } from '../../nodes/SingpassSign/actions/record/listDue.operation';
import { description as cleanUp } from '../../nodes/SingpassSign/actions/record/cleanUp.operation';
import { SingpassSessionStoreApi } from '../../credentials/SingpassSessionStoreApi.credentials';
import { SingpassSessionStorePostgresApi } from '../../credentials/SingpassSessionStorePostgresApi.credentials';
import { pgStoreSettings as n8nPgSettings, storeSettings } from '../../nodes/shared/pg-settings';
import { DEFAULT_IDLE_MS } from '../../node-red/lib/session-store';
import { KEEP_ENDED_MS } from '../../node-red/lib/store-factory';
import { pgStoreSettings as nodeRedPgSettings } from '../../node-red/lib/pg-session-store';

const idleSeconds = SESSION_POLICY.takeOverIdleMs / 1000;

it('the core engine and stores default to it', () => {
  expect(DEFAULT_RETENTION_MS).toBe(SESSION_POLICY.retentionMs);
  expect(DEFAULT_SCAN_EXTENSION_SECONDS).toBe(SESSION_POLICY.scanExtensionSeconds);
});

it('n8n: List Due Sessions (version 1), Clean Up and both store credentials default to it', () => {
  expect(listDue.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(cleanUp.find((p) => p.name === 'retentionDays')?.default).toBe(SESSION_POLICY.retentionMs / 86_400_000);
  expect(new SingpassSessionStorePostgresApi().properties.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(new SingpassSessionStoreApi().properties.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(storeSettings({}).idleMs).toBe(SESSION_POLICY.takeOverIdleMs);
  expect(n8nPgSettings({ host: 'db', database: 'd', user: 'u' }).options.idleMs).toBe(SESSION_POLICY.takeOverIdleMs);
});

it('Node-RED: the folder store, the PostgreSQL store settings and the retention default to it', () => {
  expect(DEFAULT_IDLE_MS).toBe(SESSION_POLICY.takeOverIdleMs);
  expect(KEEP_ENDED_MS).toBe(SESSION_POLICY.retentionMs);
  expect(nodeRedPgSettings({ pgHost: 'db', pgDatabase: 'd', pgUser: 'u' } as never, 'pw', 'client').idleMs).toBe(SESSION_POLICY.takeOverIdleMs);
});
