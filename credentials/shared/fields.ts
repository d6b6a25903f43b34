import type { INodeProperties } from 'n8n-workflow';

/** Credential fields shared by the Singpass Sign, Corppass and Singpass Login credentials. */

export function environmentField(staging: string, production: string): INodeProperties {
  return {
    displayName: 'Environment',
    name: 'environment',
    type: 'options',
    default: 'staging',
    options: [
      { name: 'Staging', value: 'staging', description: staging },
      { name: 'Production', value: 'production', description: production },
      { name: 'Local Sandbox', value: 'sandbox', description: 'The test stand-in started with `singpass-flows sandbox` (127.0.0.1 only, never for real users)' },
      { name: 'Custom', value: 'custom', description: 'Enter the URLs yourself' },
    ],
  };
}

export const sandboxUrlField: INodeProperties = {
  displayName: 'Sandbox URL',
  name: 'sandboxUrl',
  type: 'string',
  default: 'http://127.0.0.1:5156',
  placeholder: 'http://127.0.0.1:5156',
  description: 'The address `singpass-flows sandbox` prints on start',
  displayOptions: { show: { environment: ['sandbox'] } },
};

export function privateKeyField(name: string, displayName: string, what: string): INodeProperties {
  return {
    displayName,
    name,
    type: 'string',
    typeOptions: { password: true, rows: 6 },
    default: '',
    required: true,
    placeholder: '{"kty":"EC","crv":"P-256","x":"…","y":"…","d":"…","kid":"…"} or -----BEGIN PRIVATE KEY-----',
    description: `${what} Paste the private JWK (JSON) or a PEM private key; EC P-256, P-384 or P-521 only. Generate one with \`npx singpass-flows keys\`.`,
  };
}

export const clientIdField: INodeProperties = {
  displayName: 'Client ID',
  name: 'clientId',
  type: 'string',
  default: '',
  required: true,
  description: 'The client ID you received at onboarding',
};

/** Every field of a login client credential (Corppass and Singpass Login differ only in their issuers). */
export function loginClientFields(provider: string, staging: string, production: string): INodeProperties[] {
  return [
    environmentField(staging, production),
    sandboxUrlField,
    {
      displayName: 'Issuer',
      name: 'issuer',
      type: 'string',
      default: '',
      placeholder: staging,
      description: `The ${provider} issuer exactly as its discovery document publishes it`,
      displayOptions: { show: { environment: ['custom'] } },
    },
    clientIdField,
    privateKeyField('signingKey', 'Signing Key', `Signs the client assertion sent to ${provider} (its public part is in your published key set).`),
    privateKeyField('encryptionKey', 'Encryption Key', `Decrypts the ID token ${provider} encrypts to you (its public part is in your published key set).`),
    {
      displayName: 'Redirect URI',
      name: 'redirectUri',
      type: 'string',
      default: '',
      required: true,
      placeholder: 'https://n8n.example.sg/webhook/login/callback',
      description: `Exactly as registered with ${provider}: the webhook URL of the workflow that completes the login`,
    },
    {
      displayName: 'Transaction Secret',
      name: 'transactionSecret',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      required: true,
      description: 'At least 32 random characters (e.g. `openssl rand -base64 32`). Seals the login transaction (PKCE verifier, nonce) so it can travel through your workflow or a cookie without being read or altered.',
    },
  ];
}
