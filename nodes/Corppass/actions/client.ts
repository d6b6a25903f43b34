import type { IExecuteFunctions } from 'n8n-workflow';
import { createCorppassClient, type CorppassClient } from '../../../src/login';
import { CREDENTIAL, loginOptions } from '../../shared/credentials';

/** A Corppass client from the node's credential (discovery and key sets are cached per process by the core). */
export async function corppassClient(ctx: IExecuteFunctions): Promise<{ client: CorppassClient; transactionSecret: string }> {
  const { transactionSecret, ...options } = await loginOptions('corppass', await ctx.getCredentials(CREDENTIAL.corppass));
  return { client: createCorppassClient(options), transactionSecret };
}
