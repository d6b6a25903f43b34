/**
 * A mocked n8n execution context (jest-mock-extended, as n8n's own node tests do): parameters, input items,
 * credentials and binary helpers are plain data here; everything the node then does (keys, HTTP to the sandbox,
 * PDFs) is real.
 */
import { mockDeep, type DeepMockProxy } from 'jest-mock-extended';
import { NodeHelpers, type IBinaryData, type ICredentialDataDecryptedObject, type IExecuteFunctions, type INode, type INodeExecutionData, type INodeParameters, type INodeTypeDescription } from 'n8n-workflow';

export interface ContextInput {
  params: Record<string, unknown> | Array<Record<string, unknown>>;
  items?: INodeExecutionData[];
  credentials?: Record<string, ICredentialDataDecryptedObject>;
  continueOnFail?: boolean;
  /** Binary contents by binary property id (see {@link pdfItem}). */
  files?: Map<string, Buffer>;
  /** The node's typeVersion (default: {@link testNode}'s, 1): the Singpass Sign node's version 2 keeps its store in a credential. */
  typeVersion?: number;
}

export const testNode: INode = { id: 'n1', name: 'Node Under Test', type: 'test', typeVersion: 1, position: [0, 0], parameters: {} };

const stored = new Map<string, Buffer>();
let seq = 0;

/** An input item whose binary property `property` holds `pdf` (the binary store is this module's map). */
export function pdfItem(pdf: Buffer, json: Record<string, unknown> = {}, property = 'data', fileName = 'contract.pdf'): INodeExecutionData {
  const id = `mem:${++seq}`;
  stored.set(id, pdf);
  return { json: json as INodeExecutionData['json'], binary: { [property]: { id, data: '', mimeType: 'application/pdf', fileName, fileSize: String(pdf.length) } } };
}

export function binaryBuffer(b: IBinaryData | undefined): Buffer {
  if (!b?.id || !stored.has(b.id)) throw new Error('no such binary in the test store');
  return stored.get(b.id)!;
}

export function executeContext(input: ContextInput): DeepMockProxy<IExecuteFunctions> {
  const ctx = mockDeep<IExecuteFunctions>();
  const items: INodeExecutionData[] = input.items ?? [{ json: {} }];
  const paramsFor = (i: number) => (Array.isArray(input.params) ? input.params[i] ?? input.params[0] : input.params);
  ctx.getInputData.mockReturnValue(items);
  ctx.getNode.mockReturnValue(input.typeVersion === undefined ? testNode : { ...testNode, typeVersion: input.typeVersion });
  ctx.continueOnFail.mockReturnValue(input.continueOnFail ?? false);
  ctx.getNodeParameter.mockImplementation(((name: string, i: number, fallback?: unknown) => {
    const p = paramsFor(i);
    return name in p ? p[name] : fallback;
  }) as IExecuteFunctions['getNodeParameter']);
  ctx.getCredentials.mockImplementation(async (name: string) => {
    const c = input.credentials?.[name];
    if (!c) throw new Error(`no credential ${name} in this test`);
    return c;
  });
  ctx.helpers.getBinaryDataBuffer.mockImplementation(async (i: number, property: string | IBinaryData) => {
    const meta = typeof property === 'string' ? items[i]?.binary?.[property] : property;
    return binaryBuffer(meta);
  });
  ctx.helpers.prepareBinaryData.mockImplementation(async (data: Buffer | NodeJS.ReadableStream, fileName?: string, mimeType?: string) => {
    const id = `mem:${++seq}`;
    stored.set(id, data as Buffer);
    return { id, data: '', fileName, mimeType: mimeType ?? 'application/octet-stream', fileSize: String((data as Buffer).length) } as IBinaryData;
  });
  return ctx;
}

/**
 * A node's parameters as n8n hands them to the node: the workflow saves only the parameters set to something else than
 * their default, and n8n fills in the rest from the node's description at the node's version (n8n-workflow's
 * NodeHelpers.getNodeParameters, the call its Workflow makes when it loads a workflow). A test of a default then tests
 * the description n8n reads, not only the fallback the node's code passes to getNodeParameter.
 */
export function asN8nLoads(description: INodeTypeDescription, typeVersion: number, saved: INodeParameters): INodeParameters {
  return NodeHelpers.getNodeParameters(description.properties, saved, true, false, { typeVersion }, description) ?? {};
}
