import { EventEmitter } from 'node:events';
import type { Agent } from 'node:http';
import { jidDecode } from '@whiskeysockets/baileys';
import { serializeError } from '@mgw/common';
import { ContactIdentities } from '@mgw/store';
import { loadAuthState, storedLidMappings, type RedisAuthState } from './auth-state.js';
import { classifyClose, reconnectDelayMs } from './disconnect-reason.js';
import type { ContactIdentity } from '@mgw/contracts';
import { AccountActions } from './account.js';
import { callUpdatesOf } from './calls.js';
import { watchGroupChanges, withGroupSubjects } from './group-events.js';
import { watchLabels } from './label-events.js';
import { GroupDirectory } from './groups.js';
import { historyNoticesOf } from './history-sync.js';
import { watchNctSaltSync, type SaltKeyStore } from './nct-salt.js';
import { contactOf, parseInbound, type InboundMessage } from './inbound-message.js';
import { parseRevision, type InboundRevision } from './inbound-revision.js';
import { parseSecretEdit, type SecretEncryptedEdit } from './secret-edit.js';
import { watchUsernames } from './usernames-seen.js';
import type { DeviceProxyAgent } from './proxy.js';
import { createSocket, type SocketContext, type WASocket } from './socket.js';
import { statusUpdatesOf, statusViewsOf } from './status-updates.js';
import { parseChannelPost, type ChannelPost } from './channel-posts.js';
import {
  accountName,
  receiptsOf,
  type AccountInfo,
  type DeviceSocketEvents,
  type NewChatCap,
  type ReachoutLock,
} from './device-socket-events.js';

/**
 * Admission of a socket open (the sender's connect gate): resolves once the device is in line;
 * `admitted` resolves true when the socket may open, false when `signal` ended the wait.
 */
export type ConnectAdmission = (signal: AbortSignal) => Promise<{ admitted: Promise<boolean> }>;

export interface DeviceSocketOptions extends Omit<SocketContext, 'proxy'> {
  /**
   * The device's proxy now (its own, else the default, else none): read at start and at every
   * `reconnectNow`, so a changed proxy takes effect by a clean reconnect.
   */
  loadProxy?: () => Promise<DeviceProxyAgent | undefined>;
  /** The lease epoch this process holds for the device (fences every auth-state write). */
  epoch: () => number | undefined;
  /**
   * Every open of the socket (the first, and each reconnect after a close other than 515) waits
   * for this admission; none when undefined.
   */
  admission?: ConnectAdmission;
  /** Tests only: a stand-in for Baileys' socket. */
  createSocket?: typeof createSocket;
  /** Counts the group metadata queries made to WhatsApp (a group's, or all the account's). */
  onGroupQuery?: (kind: 'group' | 'all') => void;
}

/**
 * The long-lived socket of a linked device: connects with the stored credentials once admitted
 * (`admission`), reconnects with backoff and full jitter on transient closes (515 at once), stops
 * for good on 401 (logged out) and 440 (replaced: someone else holds the device — never fight over
 * it).
 */
export class DeviceSocket extends EventEmitter<DeviceSocketEvents> {
  private sock: WASocket | undefined;
  private auth: RedisAuthState | undefined;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** A wait for admission in progress (aborted by drain and stop). */
  private admitting: AbortController | undefined;
  private opened = false;
  /** Hand-over in progress: the open socket (if any) finishes its sends, nothing reconnects. */
  private draining = false;
  /** The proxy every connection of this socket goes through (loadProxy), if any. */
  private proxy: DeviceProxyAgent | undefined;
  /** Settles once the auth state's stored phone <-> LID pairs are in the device's map (after start). */
  identitiesSeeded: Promise<void> = Promise.resolve();
  /** The account's groups, cached (groups.ts). */
  readonly groups = new GroupDirectory(
    () => (this.isOpen ? this.sock : undefined),
    (kind) => this.opts.onGroupQuery?.(kind),
  );

  /** The account itself: profile, presence, blocklist (account.ts). */
  readonly account = new AccountActions(() => (this.isOpen ? this.sock : undefined));

  constructor(private readonly opts: DeviceSocketOptions) {
    super();
  }

  get isOpen(): boolean {
    return this.opened && !this.stopped;
  }

  get socket(): WASocket | undefined {
    return this.sock;
  }

  /** The device's own key store (sealed, fenced by the lease; not Baileys' transaction wrapper). */
  get keyStore(): SaltKeyStore | undefined {
    return this.auth?.state.keys as SaltKeyStore | undefined;
  }

  /** The agent of the device's proxy (for the gateway's own fetches for this device), if it has one. */
  get proxyAgent(): Agent | undefined {
    return this.proxy?.agent;
  }

  /** The linked account's own JID (after open). */
  get userJid(): string | undefined {
    return this.sock?.user?.id;
  }

  /** Asks WhatsApp for the account's reach-out time lock (also reported as a `reachout` event). */
  async fetchReachoutLock(): Promise<ReachoutLock> {
    const sock = this.sock;
    if (!sock) throw new Error('the device socket is not open');
    const r = await sock.fetchAccountReachoutTimelock();
    return { active: !!r.isActive, until: r.timeEnforcementEnds, enforcementType: r.enforcementType };
  }

  /** Asks WhatsApp for the account's new-chat cap. */
  async fetchNewChatCap(): Promise<NewChatCap> {
    const sock = this.sock;
    if (!sock) throw new Error('the device socket is not open');
    const r = (await sock.fetchNewChatMessageCap()) as
      { capping_status?: string; cycle_end_timestamp?: string } | undefined;
    const end = Number(r?.cycle_end_timestamp);
    return {
      capped: r?.capping_status === 'CAPPED',
      ...(Number.isFinite(end) && end > 0 ? { cycleEndsAt: new Date(end * 1000) } : {}),
    };
  }

  async start(): Promise<void> {
    this.auth = await loadAuthState({
      redis: this.opts.redis,
      encryption: this.opts.encryption,
      deviceId: this.opts.deviceId,
      epoch: this.opts.epoch,
      onLidMapping: (pairs) => this.emit('identities', pairs),
      onFenced: () => {
        this.emit('fenced');
        this.stop().catch((err: unknown) =>
          this.opts.logger.warn('device socket not closed', {
            deviceId: this.opts.deviceId,
            err: serializeError(err),
          }),
        );
      },
    });
    this.identitiesSeeded = this.reportStoredIdentities();
    this.proxy = await this.opts.loadProxy?.();
    await this.connectWhenAdmitted();
  }

  /**
   * Puts the device in line for an open (resolves once it is in line, not when admitted) and
   * connects when admitted; at once without an admission. An admission that fails does not keep
   * the device offline: it connects.
   */
  private async connectWhenAdmitted(): Promise<void> {
    const { admission } = this.opts;
    if (!admission) {
      this.connect();
      return;
    }
    if (this.admitting || this.stopped || this.draining) return;
    const wait = new AbortController();
    this.admitting = wait;
    const done = (connect: boolean) => {
      if (this.admitting === wait) this.admitting = undefined;
      if (connect && !wait.signal.aborted) this.connect();
    };
    try {
      const { admitted } = await admission(wait.signal);
      void admitted.then(done, (err: unknown) => {
        this.opts.logger.warn('connect admission failed: connecting', {
          deviceId: this.opts.deviceId,
          err: serializeError(err),
        });
        done(true);
      });
    } catch (err) {
      this.opts.logger.warn('connect admission failed: connecting', {
        deviceId: this.opts.deviceId,
        err: serializeError(err),
      });
      done(true);
    }
  }

  /**
   * The device's proxy changed: reads it again and reconnects through it (a clean close of the
   * open socket; a reconnect that was waiting goes now). Jobs wait for the socket meanwhile.
   */
  async reconnectNow(): Promise<void> {
    this.proxy = await this.opts.loadProxy?.();
    if (this.stopped || this.draining || !this.auth) return;
    this.opts.logger.info('device socket reconnecting for a proxy change', {
      deviceId: this.opts.deviceId,
      proxy: this.proxy?.where ?? 'none',
    });
    if (this.reconnectTimer) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      this.attempt = 0;
      this.connect();
      return;
    }
    this.attempt = 0;
    // The close (not final) reconnects through the new proxy at once: `restart` semantics.
    this.sock?.end(Object.assign(new Error('proxy changed'), { output: { statusCode: 515 } }));
  }

  /**
   * Seeds the device's identity map, once per link, with the pairs its auth state already held (a
   * device linked before the map existed); later pairs arrive as `identities` events.
   */
  private async reportStoredIdentities(): Promise<void> {
    const { redis, encryption, deviceId, logger } = this.opts;
    const map = new ContactIdentities(redis);
    try {
      if (await map.seeded(deviceId)) return;
      for await (const pairs of storedLidMappings(redis, encryption, deviceId))
        await map.learn(deviceId, pairs);
      await map.markSeeded(deviceId);
    } catch (err) {
      logger.warn('stored phone <-> LID pairs not read', { deviceId, err: serializeError(err) });
    }
  }

  /**
   * Resolves true once the socket is open (logged in; the account's description is not waited
   * for), false after `timeoutMs` or when it stopped for good.
   */
  waitForOpen(timeoutMs: number): Promise<boolean> {
    if (this.isOpen) return Promise.resolve(true);
    if (this.stopped || this.draining) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.off('loggedIn', onOpen);
        this.off('close', onClose);
        this.off('draining', onDraining);
        resolve(value);
      };
      const onOpen = () => done(true);
      const onClose = (info: { final: boolean }) => info.final && done(false);
      const onDraining = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.on('loggedIn', onOpen);
      this.on('close', onClose);
      this.on('draining', onDraining);
    });
  }

  /**
   * Hand-over begins (before the worker's active sends are awaited): a pending reconnect is
   * cancelled and nothing reconnects any more, and jobs waiting for the socket to open stop
   * waiting at once (they go back to the queue for the next owner). An open socket stays open for
   * the sends in flight; `stop()` closes it.
   */
  drain(): void {
    this.draining = true;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.admitting?.abort();
    this.emit('draining');
  }

  /** Closes the socket without logging out: the next owner reconnects with the same credentials. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.opened = false;
    clearTimeout(this.reconnectTimer);
    this.admitting?.abort();
    const sock = this.sock;
    this.sock = undefined;
    if (sock) await sock.end(undefined);
    this.auth?.release();
  }

  /**
   * Logs the account out on WhatsApp (remove-companion-device: the device disappears from the
   * phone's linked devices) and closes. Resolves when the close was seen.
   */
  async logout(timeoutMs = 10_000): Promise<void> {
    const sock = this.sock;
    if (!sock || !this.opened) throw new Error('cannot log out: the socket is not open');
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      sock.ev.on('connection.update', (u) => {
        if (u.connection === 'close') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await sock.logout();
    await closed;
    this.opened = false;
    this.sock = undefined;
    this.auth?.release();
  }

  private connect(): void {
    if (this.stopped || this.draining || !this.auth) return;
    const { logger, deviceId } = this.opts;
    const ctx: SocketContext = { ...this.opts, ...(this.proxy ? { proxy: this.proxy } : {}) };
    const sock = (this.opts.createSocket ?? createSocket)(ctx, this.auth, {
      cachedGroupMetadata: async (jid) => this.groups.cached(jid),
    });
    this.sock = sock;
    this.account.watch(sock, () => this.sock === sock);
    // The group cache follows every change (group-events.ts), and changes become events.
    watchGroupChanges(sock, this.groups, (notices) => {
      if (this.sock === sock) this.emit('groupChanges', notices);
    });
    watchLabels(sock, (notice) => this.sock === sock && this.emit('label', notice));
    watchNctSaltSync(sock as never, (change) => this.sock === sock && this.emit('nctSalt', change));
    // Before the listeners below: they read the usernames it puts on messages (usernames.ts).
    watchUsernames(sock, (named) => this.sock === sock && this.emit('identities', named));
    sock.ev.on('connection.update', (u) => {
      if (this.sock !== sock) return;
      if (u.connection === 'open') {
        this.attempt = 0;
        // A failure seen before this connection (e.g. a media upload) is no reason of a later close.
        this.proxy?.takeFailure();
        this.opened = true;
        // Sends need no more than the login: they go while the account is being described.
        this.emit('loggedIn');
        void this.describeAccount(sock).then((info) => {
          // The picture lookup takes up to 10 s: a socket closed, stopped or logged out meanwhile
          // must not mark the session connected again.
          if (this.sock === sock && this.isOpen) this.emit('open', info);
          else logger.info('device socket closed before its open was reported', { deviceId });
        });
      }
      if (u.connection === 'close') this.onClose(u.lastDisconnect?.error);
      if (u.reachoutTimeLock) {
        const lock = u.reachoutTimeLock;
        this.emit('reachout', {
          active: !!lock.isActive,
          until: lock.timeEnforcementEnds,
          enforcementType: lock.enforcementType,
        });
      }
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      const wrote = new Set<string>();
      const met: ContactIdentity[] = [];
      for (const m of messages) {
        if (m.key.fromMe) continue;
        const contact = contactOf(m.key);
        if (contact.phone) wrote.add(contact.phone);
        if (contact.lid) wrote.add(contact.lid);
        if (contact.lid) met.push(contact);
      }
      if (this.sock !== sock) return;
      if (met.length) this.emit('identities', met);
      if (wrote.size) this.emit('wroteToUs', [...wrote]);
    });
    sock.ev.on('call', (events) => {
      const calls = callUpdatesOf(events);
      if (calls.length && this.sock === sock) this.emit('calls', calls);
    });
    sock.ev.on('creds.update', (update) => {
      const name = accountName(update.me?.name);
      if (name && this.sock === sock && this.opened) this.emit('name', name);
    });
    sock.ev.on('messages.update', (updates) => {
      const receipts = receiptsOf(updates.map(({ key, update }) => ({ key, status: update.status })));
      if (receipts.length) this.emit('receipts', receipts);
    });
    sock.ev.on('message-receipt.update', (updates) => {
      const views = statusViewsOf(updates);
      if (views.length && this.sock === sock) this.emit('statusViews', views);
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      const { views, statuses } = statusUpdatesOf(messages);
      if (views.length && this.sock === sock) this.emit('statusViews', views);
      if (statuses.length && this.sock === sock) this.emit('statuses', statuses);
      const posts = messages.map(parseChannelPost).filter((p): p is ChannelPost => p !== undefined);
      if (posts.length && this.sock === sock) this.emit('channelPosts', posts);
      const notices = historyNoticesOf(messages);
      if (notices.length && this.sock === sock) this.emit('history', notices);
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      // A receipt that arrives while Baileys still buffers the upsert of our own message is folded
      // into it (its status), and no `messages.update` follows: it is read from the upsert.
      const receipts = receiptsOf(messages);
      if (receipts.length) this.emit('receipts', receipts);
      const inbound = messages
        .map((m) => parseInbound(m))
        .filter((m): m is InboundMessage => m !== undefined);
      const revisions = messages.map(parseRevision).filter((r): r is InboundRevision => r !== undefined);
      if (revisions.length) this.emit('revisions', revisions);
      const secretEdits = messages
        .map(parseSecretEdit)
        .filter((e): e is SecretEncryptedEdit => e !== undefined);
      if (secretEdits.length) this.emit('secretEdits', secretEdits);
      if (!inbound.length) return;
      if (!inbound.some((m) => m.chat)) this.emit('inbound', inbound);
      else
        void withGroupSubjects(this.groups, inbound, (err) =>
          this.opts.logger.warn('group subject unknown', { deviceId, err: serializeError(err) }),
        ).then((done) => this.emit('inbound', done));
    });
    logger.debug('device socket connecting', { deviceId });
  }

  private onClose(error: unknown): void {
    const failure = this.proxy?.takeFailure();
    const info = failure
      ? { ...classifyClose(error), reason: `proxy_${failure.kind}` }
      : classifyClose(error);
    if (failure && this.proxy) this.emit('proxyFailure', { ...failure, where: this.proxy.where });
    this.opened = false;
    this.sock = undefined;
    const final = this.stopped || this.draining || info.action === 'logged-out' || info.action === 'replaced';
    if (!this.stopped) {
      this.opts.logger.info('device socket closed', {
        deviceId: this.opts.deviceId,
        code: info.code,
        reason: info.reason,
        ...(failure ? { proxy: this.proxy?.where, proxyError: failure.message } : {}),
      });
    }
    this.emit('close', { ...info, final });
    if (final) {
      this.stopped = true;
      return;
    }
    // 515 (restart required) continues the login under way: at once, not in line again.
    const restart = info.action === 'restart';
    const delayMs = restart ? 0 : reconnectDelayMs(this.attempt);
    this.attempt += 1;
    this.emit('reconnecting', { attempt: this.attempt, delayMs });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (restart) this.connect();
      else void this.connectWhenAdmitted();
    }, delayMs);
  }

  private async describeAccount(sock: WASocket): Promise<AccountInfo> {
    const me = sock.user ?? this.auth?.state.creds.me;
    const jid = me?.id ?? '';
    const phone = jidDecode(jid)?.user ?? '';
    let profilePic: string | undefined;
    try {
      profilePic = await sock.profilePictureUrl(jid.replace(/:\d+@/, '@'), 'image', 10_000);
    } catch (err) {
      // No picture (404) or not answered: the status just has none.
      this.opts.logger.debug('no profile picture', {
        deviceId: this.opts.deviceId,
        err: serializeError(err),
      });
    }
    return { phone, name: accountName(me?.name) ?? me?.verifiedName ?? me?.notify, profilePic };
  }
}
