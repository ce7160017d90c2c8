import { randomBytes } from 'node:crypto';
import { getBinaryNodeChildren, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';

export const iqResult = (request: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: 'iq',
  attrs: { id: request.attrs.id ?? '', type: 'result', from: S_WHATSAPP_NET },
  ...(content ? { content } : {}),
});

export const iqError = (request: BinaryNode, code: number, text: string): BinaryNode => ({
  tag: 'iq',
  attrs: { id: request.attrs.id ?? '', type: 'error', from: S_WHATSAPP_NET },
  content: [{ tag: 'error', attrs: { code: String(code), text } }],
});

export const childNodes = (node: BinaryNode | undefined): BinaryNode[] =>
  node && Array.isArray(node.content) ? node.content : [];

export const firstChild = (node: BinaryNode): BinaryNode | undefined => childNodes(node)[0];

export const childrenNamed = (node: BinaryNode | undefined, tag: string): BinaryNode[] =>
  node ? getBinaryNodeChildren(node, tag) : [];

export const bytesOf = (node: BinaryNode | undefined): Buffer | undefined => {
  const c = node?.content;
  if (c === undefined || Array.isArray(c)) return undefined;
  return typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c);
};

export const node = (
  tag: string,
  attrs: Record<string, string> = {},
  content?: BinaryNode['content'],
): BinaryNode => ({
  tag,
  attrs,
  ...(content !== undefined ? { content } : {}),
});

export const newStanzaId = (): string => randomBytes(8).toString('hex').toUpperCase();

export const unixSeconds = (): string => String(Math.floor(Date.now() / 1000));
