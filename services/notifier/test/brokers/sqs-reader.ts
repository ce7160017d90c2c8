import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SqsServerHandle } from '@mgw/testing';
import type { Received } from './readers.js';

/** One SQS message as a consumer got it: `key` is `<deviceId>.<type>` (from its attributes). */
export interface SqsReceived extends Received {
  groupId?: string;
  dedupId?: string;
  attributes: Record<string, string>;
}

/** An SDK client for the test server (its endpoint, any credentials). */
export function sqsClient(server: SqsServerHandle): SQSClient {
  return new SQSClient({
    region: server.region,
    endpoint: server.endpoint,
    credentials: server.credentials,
    maxAttempts: 1,
  });
}

/**
 * Creates the queue `name` (FIFO when it ends in `.fifo`) and returns its URL. A short visibility
 * timeout: a message received just before a crash (its delete lost) comes back within seconds,
 * and in a FIFO queue its group's later messages wait for it.
 */
export async function createQueue(client: SQSClient, server: SqsServerHandle, name: string): Promise<string> {
  await client.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { VisibilityTimeout: '3', ...(name.endsWith('.fifo') ? { FifoQueue: 'true' } : {}) },
    }),
  );
  return server.queueUrl(name);
}

/**
 * A consumer of one queue: receives (long polling, 10 at most), records, deletes; goes on (every
 * 200 ms) while its server is down, so it reads what the server kept across a crash.
 */
export class SqsReader {
  readonly received: SqsReceived[] = [];
  private closed = false;
  private loop?: Promise<void>;

  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        const out = await this.client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
          }),
        );
        const got = out.Messages ?? [];
        for (const m of got) {
          const attributes = Object.fromEntries(
            Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, String(v.StringValue)]),
          );
          this.received.push({
            key: `${attributes['mgw-device-id']}.${attributes['mgw-event-type']}`,
            id: String(attributes['mgw-event-id']),
            body: JSON.parse(String(m.Body)) as Received['body'],
            attributes,
            groupId: m.Attributes?.MessageGroupId,
            dedupId: m.Attributes?.MessageDeduplicationId,
          });
        }
        if (got.length)
          await this.client.send(
            new DeleteMessageBatchCommand({
              QueueUrl: this.queueUrl,
              Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
      } catch {
        if (!this.closed) await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loop;
  }
}
