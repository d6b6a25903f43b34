import type { INodeProperties } from 'n8n-workflow';

/** Parameters several Singpass Sign operations share (each operation places them with forOperation). */
export const pdfInput: INodeProperties = {
  displayName: 'Input Binary Field',
  name: 'binaryPropertyName',
  type: 'string',
  default: 'data',
  required: true,
  hint: 'The name of the binary property holding the PDF',
  description: 'Binary property of the input item that holds the PDF',
};

export const pdfOutput: INodeProperties = {
  displayName: 'Output Binary Field',
  name: 'outputBinaryPropertyName',
  type: 'string',
  default: 'data',
  required: true,
  description: 'Binary property to put the resulting PDF in (the input\'s other binary properties are kept)',
};

export const recordInput: INodeProperties = {
  displayName: 'Session Record',
  name: 'record',
  type: 'json',
  default: '={{ $json.record }}',
  required: true,
  description: 'The session record the previous step output, loaded from where your workflow stores it (by signRef)',
};

export const deliveryInput: INodeProperties = {
  displayName: 'Webhook Delivery',
  name: 'delivery',
  type: 'json',
  default: '={{ $json.delivery }}',
  required: true,
  description: 'The "delivery" output of the Singpass Sign Trigger',
};
