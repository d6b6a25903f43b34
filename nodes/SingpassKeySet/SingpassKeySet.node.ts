import {
  NodeConnectionTypes, type ICredentialDataDecryptedObject, type IExecuteFunctions, type INodeExecutionData, type INodeType,
  type INodeTypeDescription,
} from 'n8n-workflow';
import type { LoadedKey } from '../../src/keys';
import { keySetResponse } from '../../src/login';
import { CREDENTIAL, loginPublicKeys, signSetup } from '../shared/credentials';
import { runEachItem } from '../shared/items';

/**
 * The client's public key set (JWKS) from its credentials, for a Respond to Webhook node on the JWKS URL you
 * registered: Singpass and Corppass fetch it to check your assertions and to encrypt ID tokens to you; the signing
 * service fetches it to check your X-Dss-Assertion. Only public key members are ever output.
 */
export class SingpassKeySet implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Singpass Key Set',
    name: 'singpassKeySet',
    icon: { light: 'file:keyset.svg', dark: 'file:keyset.dark.svg' },
    group: ['transform'],
    version: 1,
    subtitle: 'Public JWKS',
    description: 'Publish your public key set (JWKS) for Singpass, Corppass and the signing service',
    defaults: { name: 'Singpass Key Set' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: [
      { name: CREDENTIAL.sign, required: true, displayOptions: { show: { sources: ['sign'] } } },
      { name: CREDENTIAL.corppass, required: true, displayOptions: { show: { sources: ['corppass'] } } },
      { name: CREDENTIAL.singpassLogin, required: true, displayOptions: { show: { sources: ['singpass'] } } },
    ],
    properties: [
      {
        displayName: 'Keys From',
        name: 'sources',
        type: 'options',
        noDataExpression: true,
        options: [
          { name: 'Singpass Sign API (DSAP Signing Key)', value: 'sign' },
          { name: 'Corppass (Signing + Encryption Keys)', value: 'corppass' },
          { name: 'Singpass Login (Signing + Encryption Keys)', value: 'singpass' },
        ],
        default: 'sign',
        description: 'Which credential\'s keys to publish',
      },
      {
        displayName: 'Connect a Webhook node (GET, the JWKS path) before this node and a Respond to Webhook node after it: respond with the "body" text, status "statusCode" and the "headers".',
        name: 'notice',
        type: 'notice',
        default: '',
      },
    ],
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return [await runEachItem(this, async (i) => {
      const source = this.getNodeParameter('sources', i) as 'sign' | 'corppass' | 'singpass';
      const keys = await publicKeysOf(source, (name) => this.getCredentials(name));
      const r = keySetResponse(keys);
      return { json: { statusCode: r.status, headers: r.headers, body: r.body, keys: (JSON.parse(r.body) as { keys: unknown[] }).keys }, pairedItem: { item: i } };
    })];
  }
}

async function publicKeysOf(source: 'sign' | 'corppass' | 'singpass', credentials: (name: string) => Promise<ICredentialDataDecryptedObject>): Promise<LoadedKey[]> {
  if (source === 'sign') return [(await signSetup(await credentials(CREDENTIAL.sign))).signingKey];
  if (source === 'corppass') return loginPublicKeys('corppass', await credentials(CREDENTIAL.corppass));
  return loginPublicKeys('singpass', await credentials(CREDENTIAL.singpassLogin));
}
