/**
 * What a test does with a running stack (stack.ts): calls its API with the stack's token and the
 * admin API with an admin token, drives the simulator's control API, links a device by QR and waits
 * for its status, reads a contact's inbox. Stack starts the processes behind these calls.
 */
import type { ContactLookupsView, InboxMessage, SimulatorHandle } from '@mgw/messenger-sim';
import { waitFor } from './net.js';
import type { SimulatorEndpoint } from './simulator-process.js';
import type { ServiceProcess } from './stack-options.js';

export abstract class StackClient {
  /** The API's address (the api's, or the all-in-one process's), once it runs. */
  apiUrl = '';
  /** The token of the stack's device. */
  token = '';

  constructor(
    /** Where the simulator answers, in this process or its own. */
    readonly simulator: SimulatorEndpoint & { handle?: SimulatorHandle },
  ) {}

  /** The stack's processes: a status wait that times out names the ones still running. */
  abstract readonly processes: ServiceProcess[];

  /** Calls the gateway API with the stack's token; returns status and parsed JSON body. */
  api<T = Record<string, unknown>>(
    method: string,
    pathAndQuery: string,
    body?: unknown,
    token = this.token,
  ): Promise<{ status: number; body: T; headers: Headers }> {
    return this.call<T>(`/api/messenger/v1${pathAndQuery}`, method, body, token);
  }

  /** Calls the admin API with an admin token (the stack's `ADMIN_API_TOKEN`, say). */
  adminApi<T = Record<string, unknown>>(
    adminToken: string,
    method: string,
    pathAndQuery: string,
    body?: unknown,
  ): Promise<{ status: number; body: T; headers: Headers }> {
    return this.call<T>(`/api/admin/v1${pathAndQuery}`, method, body, adminToken);
  }

  private async call<T>(
    pathAndQuery: string,
    method: string,
    body: unknown,
    token: string,
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const res = await fetch(`${this.apiUrl}${pathAndQuery}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((err: unknown) => {
      // fetch says only "fetch failed": the reason (a reset, a refusal) is its cause.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `${method} ${pathAndQuery}: fetch failed (${cause?.code ?? ''} ${cause?.message ?? ''})`,
        {
          cause: err,
        },
      );
    });
    return { status: res.status, body: (await res.json()) as T, headers: res.headers };
  }

  /** Calls the simulator's control API. */
  async simApi<T = Record<string, unknown>>(method: string, p: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.simulator.controlUrl}${p}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json().catch(() => ({}))) as T;
    if (!res.ok) throw new Error(`simulator ${method} ${p} -> ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  /**
   * Links a device by QR — the stack's, or the one `token` acts on: /connect, the phone scans the
   * PNG, wait for `connected`.
   */
  async linkByQr(phone: string, name = 'E2E Account', token = this.token): Promise<void> {
    const connect = await this.api<{ qrCode: string }>('POST', '/connect', undefined, token);
    if (connect.status !== 200 || !connect.body.qrCode) {
      throw new Error(`connect failed: ${connect.status} ${JSON.stringify(connect.body)}`);
    }
    await this.simApi('POST', '/phone/link', { qr: connect.body.qrCode, phone, name });
    await this.waitForStatus('connected', 30_000, token);
  }

  async waitForStatus(
    status: string,
    timeoutMs = 30_000,
    token = this.token,
  ): Promise<Record<string, unknown>> {
    let last: Record<string, unknown> = {};
    try {
      await waitFor(
        async () => {
          last = (await this.api('GET', '/status', undefined, token)).body;
          return last.status === status;
        },
        { timeoutMs, what: `status ${status}` },
      );
    } catch (err) {
      // What the status said last, and who was still running: a timeout says where it stopped.
      const running = this.processes.filter((p) => p.child.exitCode === null).map((p) => p.name);
      throw new Error(
        `${(err as Error).message} (last: ${JSON.stringify(last)}; running: ${running.join(', ')})`,
      );
    }
    return last;
  }

  async inbox(phone: string): Promise<InboxMessage[]> {
    return (await this.simApi<{ messages: InboxMessage[] }>('GET', `/inbox/${phone}`)).messages;
  }

  /**
   * The contact lookups (usync "is this number on WhatsApp?") the account's devices made at the
   * simulator: how many numbers, and when each query came.
   */
  async contactLookups(phone: string): Promise<ContactLookupsView> {
    return this.simApi<ContactLookupsView>('GET', `/accounts/${phone}/contact-lookups`);
  }

  /** A contact sends the account `to` a PDF, `invoice.pdf`, through the simulator; returns its bytes. */
  async sendInvoice(contact: string, to: string): Promise<Buffer> {
    const file = Buffer.from(`%PDF-1.4 invoice ${Date.now()}\n`.repeat(50));
    await this.simApi('POST', `/contacts/${contact}/send`, {
      to,
      attachment: {
        type: 'document',
        base64: file.toString('base64'),
        fileName: 'invoice.pdf',
        mimeType: 'application/pdf',
      },
    });
    return file;
  }
}
