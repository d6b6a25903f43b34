import type { ICredentialType } from 'n8n-workflow';
import { CorppassApi } from '../../credentials/CorppassApi.credentials';
import { SingpassLoginApi } from '../../credentials/SingpassLoginApi.credentials';
import { SingpassNotificationTokenApi } from '../../credentials/SingpassNotificationTokenApi.credentials';
import { SingpassSessionStoreApi } from '../../credentials/SingpassSessionStoreApi.credentials';
import { SingpassSessionStorePostgresApi } from '../../credentials/SingpassSessionStorePostgresApi.credentials';
import { SingpassSignApi } from '../../credentials/SingpassSignApi.credentials';
import * as pkg from '../../package.json';

const all: Array<[ICredentialType, string[]]> = [
  [new SingpassSignApi(), ['signingKey']],
  [new SingpassNotificationTokenApi(), ['secret', 'previousSecret']],
  [new CorppassApi(), ['signingKey', 'encryptionKey', 'transactionSecret']],
  [new SingpassLoginApi(), ['signingKey', 'encryptionKey', 'transactionSecret']],
  [new SingpassSessionStoreApi(), ['password']],
  [new SingpassSessionStorePostgresApi(), ['password']],
];

describe.each(all)('credential %#', (cred, secrets) => {
  it('keeps every secret in a password field and nothing else', () => {
    const passwordFields = cred.properties.filter((p) => p.typeOptions?.password).map((p) => p.name);
    expect(passwordFields.sort()).toEqual([...secrets].sort());
  });

  it('is listed in package.json under its class name (what n8n loads)', () => {
    expect(pkg.n8n.credentials).toContain(`dist/credentials/${cred.constructor.name}.credentials.js`);
    expect(cred.name).toMatch(/Api$/);
  });
});
