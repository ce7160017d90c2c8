import { expect } from 'chai';
import { multipartBoundary, parseMultipart } from './multipart.js';

const form = (boundary: string, parts: string[]) =>
  Buffer.from(parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + `--${boundary}--\r\n`, 'latin1');

describe('cloud-sim: multipart/form-data', () => {
  it('When the content type is multipart, then its boundary is read, quoted or not', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).to.equal('abc');
    expect(multipartBoundary('multipart/form-data; boundary="a b"')).to.equal('a b');
    expect(multipartBoundary('application/json')).to.equal(undefined);
    expect(multipartBoundary(undefined)).to.equal(undefined);
  });

  it('When a form has fields and a file, then each part is read with its name, filename, type and bytes', () => {
    const body = form('XyZ', [
      'Content-Disposition: form-data; name="messaging_product"\r\n\r\nwhatsapp',
      'Content-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--x',
    ]);
    const parts = parseMultipart(body, 'XyZ')!;
    expect(parts.map((p) => p.name)).to.deep.equal(['messaging_product', 'file']);
    expect(parts[0]!.data.toString()).to.equal('whatsapp');
    expect(parts[1]!.filename).to.equal('a.png');
    expect(parts[1]!.contentType).to.equal('image/png');
    expect(parts[1]!.data).to.deep.equal(Buffer.from('\x89PNG\r\n--x', 'latin1'));
  });

  it('When the body is not well-formed, then it is refused', () => {
    expect(parseMultipart(Buffer.from('garbage'), 'XyZ')).to.equal(undefined);
    expect(
      parseMultipart(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end'), 'XyZ'),
    ).to.equal(undefined);
    expect(parseMultipart(form('XyZ', ['Content-Type: text/plain\r\n\r\nno name']), 'XyZ')).to.equal(
      undefined,
    );
  });
});
