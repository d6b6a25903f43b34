import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { errorItem, toNodeError } from './errors';

/** What one operation makes of one input item: one output item, or several (all paired with the input). */
export type ItemResult = INodeExecutionData | INodeExecutionData[];

/**
 * Runs `operation` for every input item: each output carries `pairedItem` pointing at its input, failures become
 * NodeOperationError/NodeApiError — or, with "Continue On Fail", an error item in place of the output.
 */
export async function runEachItem(
  ctx: IExecuteFunctions,
  operation: (itemIndex: number, item: INodeExecutionData) => Promise<ItemResult>,
): Promise<INodeExecutionData[]> {
  const items = ctx.getInputData();
  const out: INodeExecutionData[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      const result = await operation(i, items[i]);
      for (const r of Array.isArray(result) ? result : [result]) out.push({ ...r, pairedItem: { item: i } });
    } catch (e) {
      if (ctx.continueOnFail()) {
        out.push(errorItem(ctx.getNode(), e, i));
        continue;
      }
      throw toNodeError(ctx.getNode(), e, i);
    }
  }
  return out;
}
