import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  hkdf,
  NOISE_MODE,
  proto,
  sha256,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { generateKeyPair, type KeyPair } from './certificates.js';

const INTRO_LENGTH = 4;
const EMPTY = Buffer.alloc(0);

const ivFor = (counter: number): Buffer => {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
};

export interface ClientHandshakeResult {
  clientStaticKey: Buffer;
  payload: proto.ClientPayload;
}

/**
 * Responder side of Noise_XX_25519_AESGCM_SHA256 as WhatsApp uses it, mirroring Baileys'
 * noise-handler.js step for step (the client derives the same hash/salt sequence).
 */
export class NoiseServer {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private readonly ephemeral: KeyPair = generateKeyPair();
  private clientEphemeral?: Buffer;
  private inBytes: Buffer = EMPTY;
  private sawIntro = false;
  private transport?: { enc: Buffer; dec: Buffer; readCounter: number; writeCounter: number };

  constructor(
    private readonly staticKey: KeyPair,
    private readonly certChain: Uint8Array,
  ) {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
  }

  get isTransport(): boolean {
    return this.transport !== undefined;
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private mixIntoKey(data: Uint8Array): void {
    const out = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }));
    this.salt = out.subarray(0, 32);
    this.key = out.subarray(32);
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const result = aesEncryptGCM(plaintext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(result);
    return result;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const result = aesDecryptGCM(ciphertext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return result;
  }

  /** Splits raw websocket bytes into frames; the very first chunk carries the "WA" intro. */
  pushBytes(data: Buffer): Buffer[] {
    this.inBytes = this.inBytes.length ? Buffer.concat([this.inBytes, data]) : data;
    if (!this.sawIntro) {
      if (this.inBytes.length < INTRO_LENGTH) return [];
      const intro = this.inBytes.subarray(0, INTRO_LENGTH);
      this.authenticate(intro);
      this.inBytes = this.inBytes.subarray(INTRO_LENGTH);
      this.sawIntro = true;
    }
    const frames: Buffer[] = [];
    while (this.inBytes.length >= 3) {
      const size = ((this.inBytes[0] ?? 0) << 16) | ((this.inBytes[1] ?? 0) << 8) | (this.inBytes[2] ?? 0);
      if (this.inBytes.length < size + 3) break;
      frames.push(this.inBytes.subarray(3, size + 3));
      this.inBytes = this.inBytes.subarray(size + 3);
    }
    return frames;
  }

  /** Answers the client hello with our ephemeral, encrypted static key and certificate chain. */
  serverHello(clientHelloFrame: Buffer): Buffer {
    const hello = proto.HandshakeMessage.decode(clientHelloFrame);
    const clientEphemeral = hello.clientHello?.ephemeral;
    if (!clientEphemeral) throw new Error('client hello without ephemeral key');
    this.clientEphemeral = Buffer.from(clientEphemeral);
    this.authenticate(this.clientEphemeral);
    this.authenticate(this.ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, this.clientEphemeral));
    const staticEnc = this.encrypt(this.staticKey.public);
    this.mixIntoKey(Curve.sharedKey(this.staticKey.private, this.clientEphemeral));
    const payloadEnc = this.encrypt(this.certChain);
    const bytes = proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload: payloadEnc },
    }).finish();
    return this.frame(Buffer.from(bytes));
  }

  /** Reads clientFinish, switches to transport mode, returns the client's static key and payload. */
  clientFinish(frame: Buffer): ClientHandshakeResult {
    const message = proto.HandshakeMessage.decode(frame);
    const finish = message.clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('missing client finish');
    const clientStaticKey = this.decrypt(finish.static);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStaticKey));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    const keys = Buffer.from(hkdf(EMPTY, 64, { salt: this.salt, info: '' }));
    this.transport = { dec: keys.subarray(0, 32), enc: keys.subarray(32), readCounter: 0, writeCounter: 0 };
    return { clientStaticKey, payload };
  }

  async decodeNode(frame: Buffer): Promise<BinaryNode> {
    const t = this.transport;
    if (!t) throw new Error('transport not ready');
    const plain = aesDecryptGCM(frame, t.dec, ivFor(t.readCounter++), EMPTY);
    return decodeBinaryNode(plain);
  }

  encodeNode(node: BinaryNode): Buffer {
    const t = this.transport;
    if (!t) throw new Error('transport not ready');
    const plain = encodeBinaryNode(node);
    return this.frame(aesEncryptGCM(plain, t.enc, ivFor(t.writeCounter++), EMPTY));
  }

  private frame(data: Buffer): Buffer {
    const out = Buffer.allocUnsafe(data.length + 3);
    out[0] = (data.length >>> 16) & 0xff;
    out[1] = (data.length >>> 8) & 0xff;
    out[2] = data.length & 0xff;
    data.copy(out, 3);
    return out;
  }
}
