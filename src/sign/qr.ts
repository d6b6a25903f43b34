import QRCode from 'qrcode';
import { invalidInput } from '../errors';

export interface RenderQrOptions {
  format: 'png' | 'svg';
  /** PNG width in pixels (default 320). */
  width?: number;
}

/**
 * Render the session's QR payload as a PNG (Buffer) or SVG (string). Error correction "M": the payload is a short
 * deep link, and "M" keeps the code scannable from a laptop screen.
 *
 * @example const png = await renderQr(session.qrPayload, { format: 'png' });
 */
export async function renderQr(payload: string, options: { format: 'png'; width?: number }): Promise<Buffer>;
export async function renderQr(payload: string, options: { format: 'svg'; width?: number }): Promise<string>;
export async function renderQr(payload: string, options: RenderQrOptions): Promise<Buffer | string>;
export async function renderQr(payload: string, options: RenderQrOptions): Promise<Buffer | string> {
  if (typeof payload !== 'string' || payload === '') throw invalidInput('qrPayload', 'is empty; pass the qrPayload from createSession');
  const common = { errorCorrectionLevel: 'M' as const, margin: 4, width: options.width ?? 320 };
  if (options.format === 'png') return QRCode.toBuffer(payload, { ...common, type: 'png' });
  if (options.format === 'svg') return QRCode.toString(payload, { ...common, type: 'svg' });
  throw invalidInput('format', 'must be "png" or "svg"');
}
