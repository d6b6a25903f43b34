import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The DSAP-held secret the per-session `client_notification_token`s are derived from (HMAC). The webhook trigger
 * checks a delivery's Bearer with it alone — no memory of issued tokens — so deliveries are accepted after an n8n
 * restart and by any n8n process (queue mode). It also keys the signer's page links (Create Session's signerLink,
 * checked by Signer Page and Start Next Signer; a separate HMAC label, so neither opens the other). Tested by the
 * Singpass Sign node.
 */
export class SingpassNotificationTokenApi implements ICredentialType {
  name = 'singpassNotificationTokenApi';

  displayName = 'Singpass Notification Token Secret API';

  icon = 'file:singpass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass#n8n';

  properties: INodeProperties[] = [
    {
      displayName: 'Secret',
      name: 'secret',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      required: true,
      description: 'At least 32 random characters (e.g. `openssl rand -base64 32`). Changing it makes the webhook refuse sessions started before the change, and the signer page links issued before it: add the old one below while they finish.',
    },
    {
      displayName: 'Previous Secret',
      name: 'previousSecret',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      description: 'Optional: the secret you rotated out, still accepted for sessions (and signer page links) from before the rotation',
    },
  ];
}
