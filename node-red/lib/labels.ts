import type { SettingLabels } from '../../src/setup';

/** The config nodes' field labels for the core's setting keys (as the editor shows them: node-red/singpass-config.html). */
const FIELDS: Record<string, string> = {
  environment: 'Environment', sandboxUrl: 'Sandbox URL', baseUrl: 'API base URL', keySetUrl: 'Service key set', tsaUrl: 'TSA URL',
  clientId: 'Client ID', signingKey: 'Signing key', encryptionKey: 'Encryption key', trustedRoots: 'Trusted roots',
  transactionSecret: 'Transaction secret', issuer: 'Issuer', redirectUri: 'Redirect URI', profile: 'Profile', appType: 'App type',
  domainName: 'Domain name', tenantId: 'Tenant ID', secret: 'Secret', audience: 'Assertion audience',
};

/** How the core names a config node's fields in its messages: `<kind> "<node name>", field "<label>"`. */
export function configLabels(kind: string, node: { name?: string; id: string }): SettingLabels {
  return { where: `${kind} "${node.name || node.id}"`, fields: FIELDS };
}
