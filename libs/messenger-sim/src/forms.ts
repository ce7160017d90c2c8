/**
 * The forms WhatsApp writes the same thing in, each one that real WhatsApp or a real client uses,
 * so the gateway meets every one of them here rather than first in production:
 *
 * - **history**: a history chunk arrives `inline` (the deflated `HistorySync` in the
 *   notification's `initialHistBootstrapInlinePayload`, no media key: whatsmeow's
 *   `DownloadHistorySync` and Baileys' `downloadAndProcessHistorySyncNotification` read it first)
 *   or by `download` (encrypted on the media host, named by `directPath`).
 * - **serverAddress**: the server's own address in a notification's `from`, `at`
 *   (`@s.whatsapp.net`, a JID pair with no user, as Baileys' decoder renders it) or `bare`
 *   (`s.whatsapp.net`, the dictionary token; whatsmeow parses both to `types.ServerJID`).
 *
 * Each is fixed or `random` (each use picks one, and the choice is logged): POST /forms sets them,
 * GET /forms shows them. The defaults are the forms the simulator always used.
 */
import { SimError } from './sim-error.js';

export const HISTORY_FORMS = ['inline', 'download'] as const;
export type HistoryForm = (typeof HISTORY_FORMS)[number];
export const SERVER_SPELLINGS = ['at', 'bare'] as const;
export type ServerSpelling = (typeof SERVER_SPELLINGS)[number];

export interface FormsConfig {
  history: HistoryForm | 'random';
  serverAddress: ServerSpelling | 'random';
}

const DEFAULTS: FormsConfig = { history: 'download', serverAddress: 'at' };

const pick = <T>(choices: readonly T[]): T => choices[Math.floor(Math.random() * choices.length)]!;

export class SimForms {
  private config: FormsConfig;

  constructor(initial: Partial<FormsConfig> = {}) {
    this.config = { ...DEFAULTS, ...checkForms(initial) };
  }

  view(): FormsConfig {
    return { ...this.config };
  }

  set(change: Partial<FormsConfig>): FormsConfig {
    this.config = { ...this.config, ...checkForms(change) };
    return this.view();
  }

  /** The form of the next history chunk (`asked`: the caller's, which wins). */
  history(asked?: HistoryForm): HistoryForm {
    if (asked) return asked;
    return this.config.history === 'random' ? pick(HISTORY_FORMS) : this.config.history;
  }

  /** The server's address as the next notification's `from` names it. */
  server(asked?: ServerSpelling): string {
    const spelling =
      asked ?? (this.config.serverAddress === 'random' ? pick(SERVER_SPELLINGS) : this.config.serverAddress);
    return spelling === 'at' ? '@s.whatsapp.net' : 's.whatsapp.net';
  }
}

/** The fields of a forms body, checked (SimError 400 for a form the simulator does not know). */
export function checkForms(body: Record<string, unknown>): Partial<FormsConfig> {
  const out: Partial<FormsConfig> = {};
  for (const key of Object.keys(body)) {
    if (key !== 'history' && key !== 'serverAddress') throw new SimError(`unknown form ${key}`, 400);
  }
  if (body.history !== undefined) {
    if (!([...HISTORY_FORMS, 'random'] as unknown[]).includes(body.history))
      throw new SimError(`history must be one of ${[...HISTORY_FORMS, 'random'].join(', ')}`, 400);
    out.history = body.history as FormsConfig['history'];
  }
  if (body.serverAddress !== undefined) {
    if (!([...SERVER_SPELLINGS, 'random'] as unknown[]).includes(body.serverAddress))
      throw new SimError(`serverAddress must be one of ${[...SERVER_SPELLINGS, 'random'].join(', ')}`, 400);
    out.serverAddress = body.serverAddress as FormsConfig['serverAddress'];
  }
  return out;
}
