import * as crypto from 'node:crypto';
import * as fs from 'node:fs';

/** A valid classic-xref PDF of about `mb` megabytes: 50 pages, each drawing one random RGB image. */
export function writePdf(file: string, mb: number): void {
  const pages = 50;
  const imgBytes = Math.max(3, Math.floor((mb * 1024 * 1024) / pages / 3) * 3);
  const side = Math.floor(Math.sqrt(imgBytes / 3));
  const fd = fs.openSync(file, 'w');
  let pos = 0;
  const offsets: number[] = [];
  const put = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    fs.writeSync(fd, buf);
    pos += buf.length;
  };
  const obj = (n: number, body: string, stream?: Buffer) => {
    offsets[n] = pos;
    put(`${n} 0 obj\n${body}\n`);
    if (stream) {
      put('stream\n');
      put(stream);
      put('\nendstream\n');
    }
    put('endobj\n');
  };
  put('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  // 1 catalog, 2 pages, then per page i: page 3+3i, content 4+3i, image 5+3i
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: pages }, (_, i) => `${3 + 3 * i} 0 R`).join(' ');
  obj(2, `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  for (let i = 0; i < pages; i++) {
    const p = 3 + 3 * i;
    obj(p, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im0 ${p + 2} 0 R >> >> /Contents ${p + 1} 0 R >>`);
    const content = Buffer.from('q 500 0 0 500 48 171 cm /Im0 Do Q\n', 'latin1');
    obj(p + 1, `<< /Length ${content.length} >>`, content);
    const data = crypto.randomBytes(side * side * 3);
    obj(p + 2, `<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length ${data.length} >>`, data);
  }
  const size = 3 + 3 * pages;
  const xref = pos;
  put(`xref\n0 ${size}\n0000000000 65535 f\r\n`);
  for (let n = 1; n < size; n++) put(`${String(offsets[n]).padStart(10, '0')} 00000 n\r\n`);
  put(`trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  fs.closeSync(fd);
}
