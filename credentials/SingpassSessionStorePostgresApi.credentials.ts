import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { SESSION_POLICY } from '../src/session';

/**
 * The PostgreSQL database the Session Record operations keep signing sessions in when their Store is "PostgreSQL":
 * the choice for n8n in queue mode (main, webhook and worker processes on several hosts share it; a folder is per
 * host). The store creates its tables (named with the prefix) on first use. Tested by the Singpass Sign node.
 */
export class SingpassSessionStorePostgresApi implements ICredentialType {
  name = 'singpassSessionStorePostgresApi';

  displayName = 'Singpass Session Store (PostgreSQL) API';

  icon = 'file:singpass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass/blob/main/docs/n8n-queue-mode.md';

  properties: INodeProperties[] = [
    {
      displayName: 'Host',
      name: 'host',
      type: 'string',
      default: 'localhost',
      required: true,
    },
    {
      displayName: 'Port',
      name: 'port',
      type: 'number',
      default: 5432,
      required: true,
    },
    {
      displayName: 'Database',
      name: 'database',
      type: 'string',
      default: 'singpass',
      required: true,
      description: 'An existing database; it may be n8n\'s own (the tables are prefixed)',
    },
    {
      displayName: 'User',
      name: 'user',
      type: 'string',
      default: '',
      required: true,
      description: 'A user allowed to create tables in the database (first use) and to read and write them',
    },
    {
      displayName: 'Password',
      name: 'password',
      type: 'string',
      typeOptions: { password: true },
      default: '',
    },
    {
      displayName: 'SSL',
      name: 'ssl',
      type: 'boolean',
      default: false,
      description: 'Whether to connect over TLS, checking the server certificate against the system\'s trusted CAs',
    },
    {
      displayName: 'Table Prefix',
      name: 'tablePrefix',
      type: 'string',
      default: 'singpass_sign_',
      description: 'Prefix of the store\'s table names (lower-case letters, digits and _), to keep several stores apart in one database',
    },
    {
      displayName: 'Leave a Step in Progress Alone For (Seconds)',
      name: 'idleSeconds',
      type: 'number',
      typeOptions: { minValue: 0 },
      default: SESSION_POLICY.takeOverIdleMs / 1000,
      description: 'A record saved in the middle of a step (prepared but not recorded as submitted, signed but not finished) is listed as due by List Due Sessions once unchanged this long: the run working on it has died. The store computes it at every save, so it is set here, once for every node and process.',
    },
  ];
}
