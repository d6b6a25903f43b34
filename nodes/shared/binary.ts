import type { IBinaryData, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { invalidInput } from '../../src/errors';

/**
 * The PDF of one item, from its binary property. In filesystem binary mode n8n reads the file once here; the core then
 * works on this one Buffer (it appends incremental updates, it never copies the whole input twice).
 */
export async function readPdf(ctx: IExecuteFunctions, itemIndex: number, property: string): Promise<{ pdf: Buffer; meta: IBinaryData }> {
  const item = ctx.getInputData()[itemIndex];
  const meta = item?.binary?.[property];
  if (!meta) {
    const present = Object.keys(item?.binary ?? {});
    throw invalidInput('Input Binary Field', `the item has no binary property "${property}"${present.length ? ` (it has: ${present.join(', ')})` : ' (it has no binary data at all)'}; set "Input Binary Field" to the property holding the PDF`);
  }
  const pdf = await ctx.helpers.getBinaryDataBuffer(itemIndex, property);
  return { pdf, meta };
}

/** Store a PDF as n8n binary data (memory or filesystem, as the instance is configured). */
export async function pdfBinary(ctx: IExecuteFunctions, pdf: Buffer, fileName: string): Promise<IBinaryData> {
  return ctx.helpers.prepareBinaryData(pdf, fileName, 'application/pdf');
}

/**
 * Output item carrying a new PDF under `property`, keeping the input item's other binaries (e.g. the original) and
 * merging `json` into its JSON.
 */
export async function withPdf(
  ctx: IExecuteFunctions, item: INodeExecutionData, property: string, pdf: Buffer, fileName: string, json: Record<string, unknown>,
): Promise<INodeExecutionData> {
  return {
    json: { ...item.json, ...json } as INodeExecutionData['json'],
    binary: { ...(item.binary ?? {}), [property]: await pdfBinary(ctx, pdf, fileName) },
  };
}

/** `contract.pdf` → `contract-signed.pdf`, keeping a name the user recognises. */
export function derivedFileName(original: string | undefined, suffix: string): string {
  const base = (original ?? 'document.pdf').replace(/\.pdf$/i, '');
  return `${base}-${suffix}.pdf`;
}
