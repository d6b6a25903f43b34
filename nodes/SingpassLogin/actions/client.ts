import type { IExecuteFunctions } from 'n8n-workflow';
import { createSingpassClient, type SingpassClient } from '../../../src/login';
import { CREDENTIAL, loginOptions } from '../../shared/credentials';

/** A Singpass FAPI 2.0 client from the node's credential (discovery and key sets are cached per process by the core). */
export async function singpassClient(ctx: IExecuteFunctions, requiredAcr?: string): Promise<{ client: SingpassClient; transactionSecret: string }> {
  const { transactionSecret, ...options } = await loginOptions('singpass', await ctx.getCredentials(CREDENTIAL.singpassLogin));
  return { client: createSingpassClient({ ...options, ...(requiredAcr ? { requiredAcr } : {}) }), transactionSecret };
}
