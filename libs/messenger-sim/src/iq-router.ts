import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';
import {
  handleBlocklistIq,
  handleBusinessIq,
  handlePictureIq,
  handleStatusIq,
  type AccountProfileContext,
} from './account-profile.js';
import type { ClientConnection } from './client-connection.js';
import { handleGroupIq, type GroupIqContext } from './group-iq.js';
import { handleMexIq, type MexContext } from './mex.js';
import { handleNewsletterIq, type NewsletterPostsContext } from './newsletter-posts.js';
import { privacySettings } from './read-receipts.js';
import { handleEncryptIq } from './prekeys.js';
import type { SimAppState } from './app-state.js';
import type { Faults } from './faults.js';
import { firstChild, iqError, iqResult, node } from './stanza.js';
import { handleUsyncIq, type UsyncContext } from './usync.js';

/** What the iq routing needs of the simulator, with what the handlers it calls need. */
export interface IqRouterContext
  extends AccountProfileContext, GroupIqContext, MexContext, NewsletterPostsContext, UsyncContext {
  readonly appState: SimAppState;
  readonly faults: Faults;
  /** The `md` iqs: linking by code, the passkey steps, removing a companion (simulator.ts). */
  handleMdIq(conn: ClientConnection, iq: BinaryNode): void;
  /** Privacy tokens each account issued to its contacts, by account phone. */
  readonly privacyTokensIssued: Map<string, number>;
}

/**
 * Every iq a Baileys client sends, by namespace; anything unknown gets an empty result. A stall
 * fault swallows it, or with `ms` answers it that much later (`delayed`: that later answer).
 */
export function routeIq(sim: IqRouterContext, conn: ClientConnection, iq: BinaryNode, delayed = false): void {
  const xmlns = iq.attrs.xmlns ?? '';
  const child = firstChild(iq);
  const stall = delayed ? undefined : sim.faults.takeStall(conn.account?.phone, xmlns, child?.tag);
  if (stall?.ms !== undefined) {
    sim.logger.info({ xmlns, tag: child?.tag, ms: stall.ms }, 'delaying query (fault)');
    setTimeout(() => routeIq(sim, conn, iq, true), stall.ms).unref();
    return;
  }
  if (stall) {
    sim.logger.info({ xmlns, tag: child?.tag }, 'stalling query (fault)');
    return;
  }
  switch (xmlns) {
    case 'encrypt':
      return handleEncryptIq(sim, conn, iq);
    case 'usync':
      return handleUsyncIq(sim, conn, iq);
    case 'md':
      return sim.handleMdIq(conn, iq);
    case 'w:m':
      return sim.media.answerMediaConn(conn, iq);
    case 'w:g2':
      return handleGroupIq(sim, conn, iq);
    case 'w:sync:app:state':
      return void sim.appState.handleIq(conn, iq).catch((err: unknown) => {
        sim.logger.info({ err: (err as Error).message }, 'app-state query failed');
        conn.send(iqError(iq, 500, 'internal-server-error'));
      });
    case 'w:mex':
      return handleMexIq(sim, conn, iq);
    case 'newsletter':
      return handleNewsletterIq(sim, conn, iq);
    case 'w:profile:picture':
      return handlePictureIq(sim, conn, iq);
    case 'status':
      return handleStatusIq(conn, iq);
    case 'w:biz':
      return handleBusinessIq(sim, conn, iq);
    case 'privacy':
      if (iq.attrs.type === 'get') {
        const categories = Object.entries(privacySettings(sim, conn.account?.phone)).map(([name, value]) =>
          node('category', { name, value }),
        );
        return conn.send(iqResult(iq, [node('privacy', {}, categories)]));
      }
      countPrivacyTokens(sim, conn, iq);
      return conn.send(iqResult(iq));
    case 'blocklist':
      return handleBlocklistIq(sim, conn, iq);
    case 'abt':
      return conn.send(iqResult(iq, [node('props', { protocol: '1', hash: 'sim' })]));
    default:
      sim.logger.debug(
        { xmlns, type: iq.attrs.type, tag: child?.tag },
        'answering unknown iq with an empty result',
      );
      return conn.send(iqResult(iq));
  }
}

/** A `privacy` set iq issuing our tokens to contacts (`<tokens><token jid=… type=trusted_contact/>`). */
function countPrivacyTokens(sim: IqRouterContext, conn: ClientConnection, iq: BinaryNode): void {
  const phone = conn.account?.phone;
  const tokens = getBinaryNodeChild(iq, 'tokens');
  if (!phone || !tokens || !Array.isArray(tokens.content)) return;
  const issued = tokens.content.filter((t) => t.tag === 'token').length;
  sim.privacyTokensIssued.set(phone, (sim.privacyTokensIssued.get(phone) ?? 0) + issued);
}
