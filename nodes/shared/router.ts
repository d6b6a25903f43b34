import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../src/errors';
import { runEachItem, type ItemResult } from './items';

/** One operation of a node: its parameters (shown only for it) and what it does with one item. */
export interface Operation {
  description: INodeProperties[];
  execute(this: IExecuteFunctions, itemIndex: number, item: INodeExecutionData): Promise<ItemResult>;
}

/** resource → operation → implementation (n8n's Airtable v2 layout: the node class only routes). */
export type OperationTable = Record<string, Record<string, Operation>>;

/** Run the selected operation for every item (pairedItem and Continue On Fail handled once, in runEachItem). */
export async function route(ctx: IExecuteFunctions, table: OperationTable): Promise<INodeExecutionData[][]> {
  const resource = ctx.getNodeParameter('resource', 0);
  const operation = ctx.getNodeParameter('operation', 0);
  const op = table[resource]?.[operation];
  if (!op) throw invalidInput('Operation', `"${resource} / ${operation}" is not supported by this node version`);
  return [await runEachItem(ctx, (i, item) => op.execute.call(ctx, i, item))];
}

/** Show `properties` only for one resource + operation (n8n's displayOptions). */
export function forOperation(resource: string, operation: string, properties: INodeProperties[]): INodeProperties[] {
  return properties.map((p) => ({
    ...p,
    displayOptions: { ...p.displayOptions, show: { ...p.displayOptions?.show, resource: [resource], operation: [operation] } },
  }));
}
