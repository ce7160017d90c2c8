import { postStatus, statusesOf, viewStatus, type StatusBroadcastContext } from './status-broadcast.js';
import { SimError } from './sim-error.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const phoneList = (body: Body, key: string): string[] | undefined => {
  const value = body[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string' && typeof p !== 'number'))
    throw new SimError(`${key} must be an array of phone numbers`, 400);
  return value.map(String);
};

/**
 * The control API's status routes: what an account posted (with who decrypted and who opened each),
 * viewers opening a status (read receipts to the poster), a contact posting a text status.
 */
export function statusRoutes(sim: StatusBroadcastContext): Array<[string, RegExp, Handler]> {
  return [
    ['GET', /^\/statuses\/([^/]+)$/, (_b, [phone]) => ({ statuses: statusesOf(sim, phone!) })],
    ['POST', /^\/statuses\/([^/]+)\/view$/, (b, [id]) => viewStatus(sim, id!, phoneList(b, 'viewers'))],
    [
      'POST',
      /^\/contacts\/([^/]+)\/status$/,
      (b, [phone]) =>
        postStatus(sim, phone!, {
          text: typeof b.text === 'string' ? b.text : undefined,
          viewers: phoneList(b, 'viewers') ?? [],
          ...(typeof b.backgroundArgb === 'number' ? { backgroundArgb: b.backgroundArgb } : {}),
        }),
    ],
  ];
}
