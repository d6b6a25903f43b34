/**
 * The optional picture in the signature box (a logo or a handwritten-style mark), PNG or JPEG, as an image XObject.
 * JPEG goes in as it is (DCTDecode); PNG is decoded, its alpha split into a soft mask, and deflated again, because a
 * PDF cannot take a PNG's filtered rows with alpha directly.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { invalidInput } from '../errors';
import { PdfRef, PdfStream, PdfString, dict, name } from './pdf/objects';
import type { IncrementalUpdate } from './pdf/writer';

/** Images larger than this are refused: the box is small, and the bytes live in the session record until signing. */
export const MAX_IMAGE_BYTES = 512 * 1024;
const MAX_PIXELS = 4096 * 4096;

export interface SignatureImage {
  width: number;
  height: number;
  /** Adds the image (and its soft mask) to the update; returns the image XObject. */
  addTo(update: IncrementalUpdate): PdfRef;
}

const bad = (why: string) => invalidInput('appearance.image', why);

/** Reads a PNG or JPEG (bytes or base64) into an image the box can draw. */
export function readSignatureImage(input: Buffer | string): SignatureImage {
  const bytes = typeof input === 'string' ? Buffer.from(input.replace(/^data:image\/\w+;base64,/, ''), 'base64') : input;
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw bad('expected PNG or JPEG bytes (or their base64)');
  if (bytes.length > MAX_IMAGE_BYTES) throw bad(`is ${bytes.length} bytes; at most ${MAX_IMAGE_BYTES} (a small logo or mark is enough)`);
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return readJpeg(bytes);
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return readPng(bytes);
  throw bad('must be a PNG or a JPEG');
}

function readJpeg(jpeg: Buffer): SignatureImage {
  for (let at = 2; at + 9 < jpeg.length; ) {
    if (jpeg[at] !== 0xff) throw bad('is not a readable JPEG');
    const marker = jpeg[at + 1];
    const len = jpeg.readUInt16BE(at + 2);
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the size and components.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = jpeg.readUInt16BE(at + 5);
      const width = jpeg.readUInt16BE(at + 7);
      const components = jpeg[at + 9];
      const space = { 1: 'DeviceGray', 3: 'DeviceRGB', 4: 'DeviceCMYK' }[components];
      if (!space || !width || !height) throw bad('is a JPEG with an unsupported colour layout');
      return {
        width,
        height,
        addTo: (update) =>
          update.add(
            new PdfStream(
              dict({
                Type: name('XObject'), Subtype: name('Image'), Width: width, Height: height, ColorSpace: name(space), BitsPerComponent: 8,
                Filter: name('DCTDecode'),
                // Adobe CMYK JPEGs are stored inverted.
                Decode: components === 4 ? [1, 0, 1, 0, 1, 0, 1, 0] : undefined,
              }),
              jpeg,
            ),
          ),
      };
    }
    at += 2 + len;
  }
  throw bad('is not a readable JPEG');
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function readPng(png: Buffer): SignatureImage {
  let width = 0;
  let height = 0;
  let depth = 0;
  let colour = 0;
  let palette: Buffer | undefined;
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      colour = data[9];
      if (data[12] !== 0) throw bad('is an interlaced PNG; save it without interlacing');
    } else if (type === 'PLTE') palette = data;
    else if (type === 'tRNS' && colour === 3) throw bad('is a palette PNG with transparency; save it as RGBA');
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + len;
  }
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour];
  if (!channels || depth !== 8 || !width || !height || width * height > MAX_PIXELS || (colour === 3 && !palette)) {
    throw bad('must be an 8-bit PNG (grey, RGB, palette, or with alpha) of at most 4096 × 4096 pixels');
  }
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat));
  } catch {
    throw bad('is a damaged PNG');
  }
  const stride = width * channels;
  if (raw.length < height * (stride + 1)) throw bad('is a damaged PNG');
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels] : 0;
      const b = y > 0 ? pixels[out - stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[out - stride + x - channels] : 0;
      const p = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter];
      if (p === undefined) throw bad('is a damaged PNG');
      pixels[out + x] = (row[x] + p) & 0xff;
    }
  }
  const hasAlpha = colour === 4 || colour === 6;
  const colours = hasAlpha ? channels - 1 : channels;
  let colourBytes = pixels;
  let alpha: Buffer | undefined;
  if (hasAlpha) {
    colourBytes = Buffer.alloc(width * height * colours);
    alpha = Buffer.alloc(width * height);
    for (let i = 0; i < width * height; i++) {
      pixels.copy(colourBytes, i * colours, i * channels, i * channels + colours);
      alpha[i] = pixels[i * channels + colours];
    }
  }
  const space = colour === 3 ? [name('Indexed'), name('DeviceRGB'), palette!.length / 3 - 1, new PdfString(palette!, true)] : name(colours === 1 ? 'DeviceGray' : 'DeviceRGB');
  return {
    width,
    height,
    addTo(update) {
      const image = (cs: unknown, data: Buffer, smask?: PdfRef) =>
        new PdfStream(
          dict({
            Type: name('XObject'), Subtype: name('Image'), Width: width, Height: height, ColorSpace: cs as never, BitsPerComponent: 8,
            Filter: name('FlateDecode'), SMask: smask,
          }),
          deflateSync(data),
        );
      const mask = alpha && update.add(image(name('DeviceGray'), alpha));
      return update.add(image(space, colourBytes, mask));
    },
  };
}
