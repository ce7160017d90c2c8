/**
 * Posts to channels (newsletters) as WhatsApp takes them from the owner's linked device: a
 * `<message to="<id>@newsletter">` whose message travels in a `<plaintext>` node (channels are
 * not end-to-end encrypted), acked with the post's `server_id` and passed on to every follower's
 * linked devices. An edit (`edit="1"`, a MESSAGE_EDIT protocol message) changes a post's text and
 * a revoke (`edit="7"`/`"8"`) deletes it, for the followers too. Followers react to a post
 * (`type="reaction"` with the post's `server_id`) and view it (control API). The owner reads the
 * counts with the `newsletter` iq `<message_updates count>` (Baileys' `newsletterFetchMessages`),
 * answered in the shape whatsmeow reads: `<message_updates><messages><message id server_id t>
 * <views_count count/><reactions><reaction code count/>…`.
 */
import { getBinaryNodeChild, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimNewsletter, SimNewsletters, SimPost } from './newsletters.js';
import { SimError } from './sim-error.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { bytesOf, iqError, iqResult, newStanzaId, node, unixSeconds } from './stanza.js';

/** What the channel posts need of the simulator. */
export interface NewsletterPostsContext extends DirectoryContext, DeliveryContext {
  readonly newsletters: SimNewsletters;
}

/** Posts kept per channel (the oldest leave first). */
const MAX_POSTS = 500;

/** A channel's posts, oldest first. */
export function postsOf(n: SimNewsletter): SimPost[] {
  return (n.postLog ??= []);
}

/** A new post numbered on from the channel's last (`server_id`). */
export function addPost(n: SimNewsletter, id: string, message: proto.IMessage): SimPost {
  n.posts = (n.posts ?? 0) + 1;
  const post: SimPost = {
    id,
    serverId: String(100 + n.posts),
    t: Math.floor(Date.now() / 1000),
    message,
    reactions: new Map(),
    viewers: new Set(),
  };
  const log = postsOf(n);
  log.push(post);
  if (log.length > MAX_POSTS) log.shift();
  return post;
}

/** Every follower's linked devices get the message as the channel sends it; answers how many. */
export function deliverToFollowers(
  sim: NewsletterPostsContext,
  n: SimNewsletter,
  post: SimPost,
  message: proto.IMessage,
  extra: Record<string, string> = {},
): number {
  const bytes = Buffer.from(proto.Message.encode(message).finish());
  const type =
    message.conversation || message.extendedTextMessage || message.protocolMessage ? 'text' : 'media';
  let delivered = 0;
  for (const phone of n.followers) {
    for (const device of sim.directory.get(phone)?.devices.values() ?? []) {
      sim.deliverToDevice(
        device,
        node(
          'message',
          { from: n.id, type, id: post.id, server_id: post.serverId, t: unixSeconds(), ...extra },
          [node('plaintext', {}, bytes)],
        ),
      );
      delivered++;
    }
  }
  return delivered;
}

/** A message stanza from a linked device to a channel: a post, an edit, a revoke or a reaction. */
export function handleNewsletterMessage(
  sim: NewsletterPostsContext,
  conn: ClientConnection,
  stanza: BinaryNode,
): void {
  const phone = conn.account?.phone;
  const id = stanza.attrs.id ?? newStanzaId();
  const to = stanza.attrs.to ?? '';
  const ack = (attrs: Record<string, string>) =>
    conn.send(node('ack', { class: 'message', id, from: to, t: unixSeconds(), ...attrs }));
  const n = sim.newsletters.find(to, 'JID');
  if (!phone || !n) return ack({ error: '404' });
  if (stanza.attrs.type === 'reaction') return ack(react(n, phone, stanza) ? {} : { error: '404' });
  if (n.owner !== phone) return ack({ error: '403' });
  const bytes = bytesOf(getBinaryNodeChild(stanza, 'plaintext'));
  if (!bytes) return ack({ error: '400' });
  const message = proto.Message.decode(bytes);
  const protocol = message.protocolMessage;
  if (stanza.attrs.edit === '1' || stanza.attrs.edit === '7' || stanza.attrs.edit === '8') {
    const target = postsOf(n).find((p) => p.id === protocol?.key?.id && !p.deleted);
    if (!target) return ack({ error: '404' });
    if (protocol?.type === proto.Message.ProtocolMessage.Type.REVOKE) target.deleted = true;
    else if (protocol?.editedMessage) {
      target.message = protocol.editedMessage;
      target.edited = true;
    } else return ack({ error: '400' });
    ack({ server_id: target.serverId });
    deliverToFollowers(sim, n, target, message, { edit: stanza.attrs.edit });
    return;
  }
  const post = addPost(n, id, message);
  ack({ server_id: post.serverId });
  deliverToFollowers(sim, n, post, message);
}

/** A follower's reaction to a post (`code` empty or `edit="7"`: taken back); whether the post exists. */
function react(n: SimNewsletter, phone: string, stanza: BinaryNode): boolean {
  const post = postsOf(n).find((p) => p.serverId === stanza.attrs.server_id && !p.deleted);
  if (!post) return false;
  const code = getBinaryNodeChild(stanza, 'reaction')?.attrs.code;
  if (code && stanza.attrs.edit !== '7') post.reactions.set(phone, code);
  else post.reactions.delete(phone);
  return true;
}

/** The `newsletter` iq: `<message_updates count>` of a channel the account owns. */
export function handleNewsletterIq(
  sim: NewsletterPostsContext,
  conn: ClientConnection,
  iq: BinaryNode,
): void {
  const updates = getBinaryNodeChild(iq, 'message_updates');
  if (!updates) return conn.send(iqResult(iq));
  const n = sim.newsletters.find(iq.attrs.to ?? '', 'JID');
  if (!n) return conn.send(iqError(iq, 404, 'item-not-found'));
  if (n.owner !== conn.account?.phone) return conn.send(iqError(iq, 403, 'forbidden'));
  const count = Math.max(1, Math.min(100, Number(updates.attrs.count) || 20));
  const posts = postsOf(n)
    .filter((p) => !p.deleted)
    .slice(-count)
    .map((p) => {
      const tally = new Map<string, number>();
      for (const code of p.reactions.values()) tally.set(code, (tally.get(code) ?? 0) + 1);
      return node('message', { id: p.id, server_id: p.serverId, t: String(p.t), type: 'text' }, [
        node('views_count', { count: String(p.viewers.size) }),
        node(
          'reactions',
          {},
          [...tally].map(([code, c]) => node('reaction', { code, count: String(c) })),
        ),
      ]);
    });
  conn.send(iqResult(iq, [node('message_updates', {}, [node('messages', {}, posts)])]));
}

/** A post by its `server_id`, for the control API. */
export function requirePost(n: SimNewsletter, serverId: string): SimPost {
  const post = postsOf(n).find((p) => p.serverId === serverId);
  if (!post) throw new SimError('post not found', 404);
  return post;
}

/** A post as the control API shows it. */
export function postControlView(p: SimPost) {
  return {
    id: p.id,
    serverId: p.serverId,
    text:
      p.message.conversation ??
      p.message.extendedTextMessage?.text ??
      p.message.imageMessage?.caption ??
      undefined,
    kind: Object.keys(p.message).find((k) => k !== 'messageContextInfo'),
    ...(p.edited ? { edited: true } : {}),
    ...(p.deleted ? { deleted: true } : {}),
    views: p.viewers.size,
    reactions: Object.fromEntries([...p.reactions]),
  };
}
