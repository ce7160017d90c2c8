import https from 'node:https';
import makeWASocket, {
  Browsers,
  DisconnectReason,
  initAuthCreds,
  WA_CERT_DETAILS,
  type AuthenticationCreds,
  type ConnectionState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type UserFacingSocketConfig,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { SimulatorInfo } from '@mgw/messenger-sim';

/** What a sandbox-mode gateway does: trust the simulator's Noise root and its media CA. */
export function trustSimulator(info: SimulatorInfo): https.Agent {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(info.rootPublicKey, 'hex');
  return new https.Agent({ ca: info.mediaCaPem });
}

const noop = () => undefined;
export const silentPino = {
  level: 'silent',
  child() {
    return silentPino;
  },
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  fatal: noop,
};

/** Auth state kept in memory, as the gateway keeps it in Redis. */
export interface MemoryAuthState {
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  /** Copies the Signal key store, to simulate an owner that resumes from stale state. */
  snapshot(): Map<string, unknown>;
  restore(snapshot: Map<string, unknown>): void;
}

export function memoryAuthState(): MemoryAuthState {
  let store = new Map<string, unknown>();
  const keys: SignalKeyStore = {
    get: <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = store.get(`${type}:${id}`);
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set: (data: SignalDataSet) => {
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) store.delete(`${type}:${id}`);
          else store.set(`${type}:${id}`, value);
        }
      }
    },
  };
  return {
    creds: initAuthCreds(),
    keys,
    snapshot: () => structuredClone(store),
    restore: (snapshot) => {
      store = structuredClone(snapshot);
    },
  };
}

export interface TestDeviceClose {
  statusCode: number | undefined;
  message: string;
}

/**
 * One gateway-side device: owns an auth state across sockets, reconnects on 515 like a
 * gateway must, and records connection updates so tests can wait on them.
 */
export class TestDevice {
  readonly auth = memoryAuthState();
  sock?: WASocket;
  closes: TestDeviceClose[] = [];
  private readonly agent: https.Agent;
  private listeners: Array<(u: Partial<ConnectionState>) => void> = [];

  constructor(
    private readonly info: SimulatorInfo,
    private readonly options: {
      keepAliveIntervalMs?: number;
      /** More socket config, applied last (e.g. `shouldSyncHistoryMessage`). */
      socketConfig?: Partial<UserFacingSocketConfig>;
    } = {},
  ) {
    this.agent = trustSimulator(info);
  }

  connect(): WASocket {
    const { socketConfig, ...options } = this.options;
    const sock = makeWASocket({
      waWebSocketUrl: this.info.wsUrl,
      auth: this.auth,
      logger: silentPino as never,
      fetchAgent: this.agent,
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      shouldSyncHistoryMessage: () => false,
      connectTimeoutMs: 10_000,
      ...options,
      ...socketConfig,
    });
    this.sock = sock;
    sock.ev.on('creds.update', (update) => Object.assign(this.auth.creds, update));
    sock.ev.on('connection.update', (update) => {
      if (update.connection === 'close') {
        const error = update.lastDisconnect?.error as
          { output?: { statusCode?: number }; message?: string } | undefined;
        const statusCode = error?.output?.statusCode;
        this.closes.push({ statusCode, message: error?.message ?? '' });
        if (statusCode === DisconnectReason.restartRequired && this.sock === sock) this.connect();
      }
      for (const listener of this.listeners) listener(update);
    });
    return sock;
  }

  waitForUpdate(
    predicate: (u: Partial<ConnectionState>) => boolean,
    timeoutMs = 15_000,
  ): Promise<Partial<ConnectionState>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== listener);
        reject(new Error('timed out waiting for connection update'));
      }, timeoutMs);
      const listener = (u: Partial<ConnectionState>) => {
        if (!predicate(u)) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        resolve(u);
      };
      this.listeners.push(listener);
    });
  }

  waitForOpen(timeoutMs?: number): Promise<unknown> {
    return this.waitForUpdate((u) => u.connection === 'open', timeoutMs);
  }

  waitForClose(timeoutMs?: number): Promise<TestDeviceClose> {
    return this.waitForUpdate((u) => u.connection === 'close', timeoutMs).then(
      () => this.closes[this.closes.length - 1]!,
    );
  }

  async nextQr(): Promise<string> {
    const update = await this.waitForUpdate((u) => !!u.qr);
    return update.qr!;
  }

  /** Closes the current socket and resolves once its close event has been seen. */
  async end(): Promise<void> {
    const sock = this.sock;
    if (!sock) return;
    this.sock = undefined;
    const closed = this.waitForClose(5_000).catch(() => undefined);
    void sock.end(undefined);
    await closed;
  }
}
