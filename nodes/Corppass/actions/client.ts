import type { IExecuteFunctions } from 'n8n-workflow';
import type { CorppassClient, CorppassFapiClient } from '../../../src/login';
import { CREDENTIAL, corppassLoginClient, loginOptions } from '../../shared/credentials';

/** A Corppass client for the credential's profile (discovery and key sets are cached per process by the core). */
export async function corppassClient(ctx: IExecuteFunctions): Promise<{ client: CorppassClient | CorppassFapiClient; transactionSecret: string }> {
  const credential = await ctx.getCredentials(CREDENTIAL.corppass);
  const { transactionSecret, ...options } = await loginOptions('corppass', credential);
  return { client: corppassLoginClient(options, credential), transactionSecret };
}
