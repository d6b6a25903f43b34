import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * Where signing sessions are kept: ONE credential that the Singpass Sign Trigger and every Session Record operation
 * of a workflow share, so the store is chosen in one place and switching to queue mode is one edit (Kind: Folder →
 * PostgreSQL). A folder is per host; PostgreSQL is shared by main, webhook and worker processes on several hosts.
 * Tested by the Singpass Sign node.
 */
export class SingpassSessionStoreApi implements ICredentialType {
  name = 'singpassSessionStoreApi';

  displayName = 'Singpass Session Store API';

  icon = 'file:singpass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass/blob/main/docs/n8n.md#the-session-store';

  properties: INodeProperties[] = [
    {
      displayName: 'Kind',
      name: 'kind',
      type: 'options',
      options: [
        { name: 'Folder', value: 'folder', description: 'Files in a folder of this host: one n8n process, or several on one host' },
        { name: 'PostgreSQL', value: 'postgres', description: 'A PostgreSQL database: for queue mode, where main, webhook and worker processes may run on several hosts' },
      ],
      default: 'folder',
    },
    {
      displayName: 'Folder',
      name: 'folder',
      type: 'string',
      // n8n 2.x allows files under ~/.n8n-files by default (the Docker image's home is /home/node)
      default: '/home/node/.n8n-files/singpass',
      required: true,
      displayOptions: { show: { kind: ['folder'] } },
      description: 'Absolute path of the folder holding the session records and the PDFs being signed. It must be allowed by N8N_RESTRICT_FILE_ACCESS_TO (n8n 2.x allows ~/.n8n-files by default). Created when missing.',
    },
    {
      displayName: 'Host',
      name: 'host',
      type: 'string',
      default: 'localhost',
      required: true,
      displayOptions: { show: { kind: ['postgres'] } },
    },
    {
      displayName: 'Port',
      name: 'port',
      type: 'number',
      default: 5432,
      required: true,
      displayOptions: { show: { kind: ['postgres'] } },
    },
    {
      displayName: 'Database',
      name: 'database',
      type: 'string',
      default: 'singpass',
      required: true,
      displayOptions: { show: { kind: ['postgres'] } },
      description: 'An existing database; it may be n8n\'s own (the tables are prefixed)',
    },
    {
      displayName: 'User',
      name: 'user',
      type: 'string',
      default: '',
      required: true,
      displayOptions: { show: { kind: ['postgres'] } },
      description: 'A user allowed to create tables in the database (first use) and to read and write them',
    },
    {
      displayName: 'Password',
      name: 'password',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      displayOptions: { show: { kind: ['postgres'] } },
    },
    {
      displayName: 'SSL',
      name: 'ssl',
      type: 'boolean',
      default: false,
      displayOptions: { show: { kind: ['postgres'] } },
      description: 'Whether to connect over TLS, checking the server certificate against the system\'s trusted CAs',
    },
    {
      displayName: 'Table Prefix',
      name: 'tablePrefix',
      type: 'string',
      default: 'singpass_sign_',
      displayOptions: { show: { kind: ['postgres'] } },
      description: 'Prefix of the store\'s table names (lower-case letters, digits and _), to keep several stores apart in one database',
    },
    {
      displayName: 'Leave a Step in Progress Alone For (Seconds)',
      name: 'idleSeconds',
      type: 'number',
      typeOptions: { minValue: 0 },
      // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.takeOverIdleMs
      default: 45,
      description: 'A record saved in the middle of a step (prepared but not recorded as submitted, signed but not finished) is taken over by List Due Sessions and Run Due Step once unchanged this long: the run working on it has died. Longer than your slowest live step (a Submit or a Finalize gives up within about 21 s).',
    },
    {
      displayName: 'Keep Ended Sessions (Days)',
      name: 'retentionDays',
      type: 'number',
      typeOptions: { minValue: 0, numberPrecision: 4 },
      // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.retentionMs
      default: 7,
      description: 'How long a completed, failed or expired session (its record, the PDF being signed, the webhook events kept for it) stays in the store after its last change, for the signer\'s page and your lookups. A List Due Sessions node with "Delete Ended Sessions" on deletes it after that; live sessions are never deleted.',
    },
  ];
}
