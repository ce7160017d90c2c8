import type { BinaryNode } from '@whiskeysockets/baileys';
import type { WebSocket } from 'ws';
import type { NoiseCertChain } from './certificates.js';
import { NoiseServer, type ClientHandshakeResult } from './noise-server.js';
import type { SimLogger } from './logger.js';
import type { DeviceConnection } from './device-connection.js';
import type { CompanionDevice, SimUser } from './directory.js';
import { newStanzaId } from './stanza.js';

export interface ConnectionHost {
  onHandshake(conn: ClientConnection, result: ClientHandshakeResult): void;
  onNode(conn: ClientConnection, node: BinaryNode): void;
  onClose(conn: ClientConnection): void;
}

let connectionCounter = 0;

/** One client websocket: Noise framing, ordered frame processing, and server-initiated queries. */
export class ClientConnection implements DeviceConnection {
  readonly id = ++connectionCounter;
  /** When the socket was accepted (ms): a client's socket open, before its handshake. */
  readonly openedAt = Date.now();
  readonly noise: NoiseServer;
  clientStaticKey?: Buffer;
  account?: SimUser;
  device?: CompanionDevice;
  closed = false;
  private stage: 'hello' | 'finish' | 'transport' = 'hello';
  private chain: Promise<void> = Promise.resolve();
  private readonly pendingIqs = new Map<string, (node: BinaryNode) => void>();

  constructor(
    private readonly ws: WebSocket,
    certs: NoiseCertChain,
    private readonly host: ConnectionHost,
    private readonly logger: SimLogger,
  ) {
    this.noise = new NoiseServer(certs.staticKey, certs.encoded);
    ws.on('message', (data: Buffer) => this.onBytes(data));
    ws.on('close', () => this.markClosed());
    ws.on('error', (err) => {
      this.logger.debug({ err, conn: this.id }, 'websocket error');
      this.markClosed();
    });
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.pendingIqs.clear();
    this.host.onClose(this);
  }

  private onBytes(data: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.noise.pushBytes(Buffer.from(data));
    } catch (err) {
      this.logger.warn({ err, conn: this.id }, 'bad frame bytes');
      this.terminate();
      return;
    }
    for (const frame of frames) {
      if (this.stage === 'hello') {
        this.stage = 'finish';
        try {
          this.rawSend(() => this.noise.serverHello(frame));
        } catch (err) {
          this.logger.warn({ err, conn: this.id }, 'bad client hello');
          this.terminate();
          return;
        }
      } else if (this.stage === 'finish') {
        this.stage = 'transport';
        try {
          const result = this.noise.clientFinish(frame);
          this.clientStaticKey = result.clientStaticKey;
          this.host.onHandshake(this, result);
        } catch (err) {
          this.logger.warn({ err, conn: this.id }, 'noise handshake failed');
          this.terminate();
          return;
        }
      } else {
        // decrypt synchronously claims the next counter; the chain keeps dispatch in arrival order
        const decoded = this.noise.decodeNode(frame);
        this.chain = this.chain
          .then(() => decoded)
          .then((node) => this.dispatch(node))
          .catch((err: unknown) => this.logger.warn({ err, conn: this.id }, 'failed to handle frame'));
      }
    }
  }

  private dispatch(node: BinaryNode): void {
    const id = node.attrs.id;
    if (node.tag === 'iq' && id && (node.attrs.type === 'result' || node.attrs.type === 'error')) {
      const resolve = this.pendingIqs.get(id);
      if (resolve) {
        this.pendingIqs.delete(id);
        resolve(node);
        return;
      }
    }
    this.host.onNode(this, node);
  }

  private rawSend(build: () => Buffer): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(build());
  }

  send(node: BinaryNode): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(this.noise.encodeNode(node));
  }

  /** A server→client iq; never await this inside the frame handler, the reply queues behind it. */
  query(node: BinaryNode, timeoutMs = 15_000): Promise<BinaryNode> {
    const id = node.attrs.id ?? newStanzaId();
    node.attrs.id = id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingIqs.delete(id);
        reject(new Error(`client did not answer ${node.tag} ${id}`));
      }, timeoutMs);
      this.pendingIqs.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      if (this.closed) {
        clearTimeout(timer);
        reject(new Error('connection closed'));
        return;
      }
      this.send(node);
    });
  }

  /** Sends a terminal node (stream:error, failure) and closes once the client had a chance to read it. */
  endWith(node: BinaryNode, delayMs = 200): void {
    this.send(node);
    setTimeout(() => this.terminate(), delayMs).unref();
  }

  terminate(): void {
    try {
      this.ws.terminate();
    } catch {
      // already gone
    }
    this.markClosed();
  }
}
