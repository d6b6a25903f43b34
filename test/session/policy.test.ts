/**
 * One session policy (src/session/policy.ts) for every front end: the defaults each front end shows or uses for the
 * take-over idle time and the retention, and every lease a sweep takes, are SESSION_POLICY's, so the same record is
 * taken over, leased and forgotten at the same moments in n8n, Node-RED and the CLI.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
  SESSION_POLICY, DEFAULT_RETENTION_MS, DEFAULT_SCAN_EXTENSION_SECONDS, MemorySessionStore, PgSessionStore, createSessionRunner, withPhase, type SessionRecord,
} from '../../src/session';
import { description as listDue } from '../../nodes/SingpassSign/actions/record/listDue.operation';
import { description as cleanUp } from '../../nodes/SingpassSign/actions/record/cleanUp.operation';
import { handOverLeaseInput, handOverWindowInput } from '../../nodes/SingpassSign/actions/record/handOverPolicy';
import { SingpassSessionStoreApi } from '../../credentials/SingpassSessionStoreApi.credentials';
import { SingpassSessionStorePostgresApi } from '../../credentials/SingpassSessionStorePostgresApi.credentials';
import { pgStoreSettings as n8nPgSettings, storeSettings } from '../../nodes/shared/pg-settings';
import { nodeRedSessionStore, pgStoreSettings as nodeRedPgSettings } from '../../node-red/lib/store-factory';

const idleSeconds = SESSION_POLICY.takeOverIdleMs / 1000;

it('the core engine and stores default to it', () => {
  expect(DEFAULT_RETENTION_MS).toBe(SESSION_POLICY.retentionMs);
  expect(DEFAULT_SCAN_EXTENSION_SECONDS).toBe(SESSION_POLICY.scanExtensionSeconds);
});

it('n8n: List Due Sessions (version 1), Clean Up and both store credentials (idle time; the Session Store\'s retention) default to it', () => {
  expect(listDue.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(cleanUp.find((p) => p.name === 'retentionDays')?.default).toBe(SESSION_POLICY.retentionMs / 86_400_000);
  expect(new SingpassSessionStorePostgresApi().properties.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(new SingpassSessionStoreApi().properties.find((p) => p.name === 'idleSeconds')?.default).toBe(idleSeconds);
  expect(new SingpassSessionStoreApi().properties.find((p) => p.name === 'retentionDays')?.default).toBe(SESSION_POLICY.retentionMs / 86_400_000);
  expect(storeSettings({}).policy).toEqual({ takeOverIdleMs: SESSION_POLICY.takeOverIdleMs, retentionMs: SESSION_POLICY.retentionMs });
  expect(n8nPgSettings({ host: 'db', database: 'd', user: 'u' }).policy.takeOverIdleMs).toBe(SESSION_POLICY.takeOverIdleMs);
  // Run Due Step's hand-over lease and window
  expect(handOverLeaseInput.default).toBe(SESSION_POLICY.handOverLeaseMs / 1000);
  expect(handOverWindowInput.default).toBe(SESSION_POLICY.handOverWindowMs / 1000);
});

it('Node-RED: the folder store, the PostgreSQL store settings and the retention are the policy object itself', () => {
  const folder = nodeRedSessionStore({ choice: {}, clientName: 'client', sessionDir: '/tmp/unused-sessions' });
  expect(folder.policy).toBe(SESSION_POLICY);
  const pg = nodeRedSessionStore({ choice: { sessionStore: 'postgres', pgHost: 'db', pgDatabase: 'd', pgUser: 'u' }, pgPassword: 'pw', clientName: 'client' , sessionDir: '' });
  expect(pg.policy).toBe(SESSION_POLICY);
  expect(nodeRedPgSettings({ pgHost: 'db', pgDatabase: 'd', pgUser: 'u' }, 'pw', 'client').policy.takeOverIdleMs).toBe(SESSION_POLICY.takeOverIdleMs);
  // a wrong take-over time names the policy's default, not a copy of it
  expect(() => nodeRedPgSettings({ pgHost: 'db', pgDatabase: 'd', pgUser: 'u', pgTakeOverSeconds: 'x' }, 'pw', 'client')).toThrow(`(default ${SESSION_POLICY.takeOverIdleMs / 1000})`);
  return pg.close();
});

describe('leases: every claim a front end makes lasts SESSION_POLICY.leaseMs', () => {
  const T = 1_800_000_000_000;
  /** `lease_until - now` of every claim statement sent (PostgreSQL is a fake connection recording them). */
  let leases: number[];
  beforeEach(() => {
    leases = [];
    jest.spyOn(Date, 'now').mockReturnValue(T);
    const client = {
      query: async (sql: string, values: unknown[] = []) => {
        if (/SET lease_owner = \$4, lease_until = \$5/.test(sql)) leases.push(Number(values[4]) - T);
        // the hourly clean-up's one row; every other statement finds nothing
        return { rows: /\bgone AS\b/.test(sql) ? [{ deleted: null, documents: 0, signed: 0, orphans: 0, kept: 0 }] : [], rowCount: 0 };
      },
      on: () => undefined, removeListener: () => undefined, release: () => undefined,
    };
    jest.spyOn(Pool.prototype, 'connect').mockImplementation((async () => client) as never);
  });
  afterEach(() => jest.restoreAllMocks());

  it('the runner\'s sweep over a shared store (whatever its take-over time)', async () => {
    const store = new PgSessionStore('postgres://u@127.0.0.1:5432/d');
    const runner = createSessionRunner({ engine: {} as never, store, takeOverAfterMs: 1500 });
    await runner.sweep();
    await runner.close();
    await store.close();
    expect(leases).toEqual([SESSION_POLICY.leaseMs]);
  });

  it('the Node-RED sweep: due sessions and kept deliveries to replay (whatever its take-over time)', async () => {
    const store = nodeRedSessionStore({ choice: { sessionStore: 'postgres', pgHost: 'db', pgDatabase: 'd', pgUser: 'u', pgTakeOverSeconds: '3' }, pgPassword: 'pw', clientName: 'client', sessionDir: '' });
    await store.claimDue({ owner: 'owner' });
    await store.claimDeliveriesToReplay({ owner: 'owner' });
    await store.close();
    expect(leases).toEqual([SESSION_POLICY.leaseMs, SESSION_POLICY.leaseMs]);
  });

  it('a session the runner\'s sweep claimed and does not take up is given back at once', async () => {
    const ended = withPhase(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'session-records', 'v1', 'completed.json'), 'utf8')) as SessionRecord);
    const released: string[] = [];
    const store = Object.assign(new MemorySessionStore(), {
      claimDue: async () => ({ due: [{ signRef: ended.state.signRef }] }),
      releaseClaim: async (signRef: string) => !!released.push(signRef),
    });
    store.put(ended, undefined);
    const runner = createSessionRunner({ engine: {} as never, store });
    expect(await runner.sweep()).toBe(0);
    await runner.close();
    expect(released).toEqual([ended.state.signRef]);
  });
});
