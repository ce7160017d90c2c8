import type {
  IDataObject,
  IHookFunctions,
  INodeType,
  INodeTypeDescription,
  IWebhookFunctions,
  IWebhookResponseData,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes } from 'n8n-workflow';
import type { Answer, Body } from '../MessengerGateway/transport';
import { DEVICE_ID, gatewayRequest } from '../MessengerGateway/transport';
import { EVENT_OPTIONS, EVENT_TYPES } from './events';
import { RecentIds, verifyDelivery } from './signature';

type WebhookAnswer = Answer<'/webhook', 'get'>;

/** What the trigger keeps in the workflow's static data (n8n's database) between activation and its requests. */
interface TriggerState extends IDataObject {
  webhookUrl?: string;
  webhookSecret?: string;
}

/** Webhook ids seen by this process (at-least-once deliveries and replays run nothing twice). */
const recent = new RecentIds();

const selectedEvents = (ctx: IHookFunctions | IWebhookFunctions): string[] =>
  (ctx.getNodeParameter('events', []) as string[]).filter((e) => EVENT_TYPES.includes(e as never));

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');

/**
 * How long an activation or deactivation call waits out the token's rate limit (the gateway's
 * default window is 60 s) before it fails: n8n runs these hooks once, and a deactivation that
 * fails leaves the device's webhook pointing at a workflow that no longer listens.
 */
const HOOK_RATE_LIMIT_WAIT_S = 60;

/** The device's webhook as the gateway has it, or undefined when it has none (404). */
async function currentWebhook(ctx: IHookFunctions): Promise<WebhookAnswer['data'] | undefined> {
  const got = await gatewayRequest<WebhookAnswer>(ctx, {
    method: 'get',
    path: '/webhook',
    allow: [404],
    waitOnRateLimitS: HOOK_RATE_LIMIT_WAIT_S,
  });
  return got.status === 404 ? undefined : got.body.data;
}

/**
 * Starts a workflow on the gateway's events. On activation it points the device's webhook (the
 * gateway has one per device: the token's device, or the one the node's or the credential's
 * Device ID names) at this trigger with `PUT /webhook` and keeps the secret the gateway answers;
 * on deactivation it removes the webhook if it is still this trigger's. Every request is checked
 * against that secret (Standard Webhooks): a request without a valid signature is answered 401
 * and starts nothing.
 */
export class MessengerGatewayTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Messenger Gateway Trigger',
    name: 'messengerGatewayTrigger',
    icon: {
      light: 'file:../../icons/messenger-gateway.svg',
      dark: 'file:../../icons/messenger-gateway.dark.svg',
    },
    group: ['trigger'],
    version: 1,
    subtitle: '={{$parameter["events"].join(", ")}}',
    description: 'Starts the workflow when the Messenger Gateway sends an event (signed webhooks)',
    defaults: { name: 'Messenger Gateway Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'messengerGatewayApi', required: true }],
    webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
    properties: [
      {
        displayName:
          "The gateway keeps one webhook per device: activating this workflow points the device's webhook here, replacing any other, and deactivating removes it",
        name: 'notice',
        type: 'notice',
        default: '',
      },
      {
        displayName: 'Device ID',
        name: DEVICE_ID,
        type: 'string',
        default: '',
        placeholder: 'e.g. d0123456789abcdef',
        description:
          "For a workspace token: the device whose events start this workflow, overriding the credential's Device ID. Leave empty to use the credential's.",
      },
      {
        displayName: 'Events',
        name: 'events',
        type: 'multiOptions',
        required: true,
        options: EVENT_OPTIONS,
        default: ['message.received'],
        description: 'The event types that start the workflow (the gateway sends only these)',
      },
    ],
  };

  webhookMethods = {
    default: {
      /** True when the device's webhook is this trigger's URL, with these events, and the secret is kept. */
      async checkExists(this: IHookFunctions): Promise<boolean> {
        const state = this.getWorkflowStaticData('node') as TriggerState;
        const current = await currentWebhook(this);
        return (
          current !== undefined &&
          current.url === this.getNodeWebhookUrl('default') &&
          !current.disabledAt &&
          typeof state.webhookSecret === 'string' &&
          state.webhookUrl === current.url &&
          sameSet(current.events, selectedEvents(this))
        );
      },

      /** PUT /webhook with this trigger's URL and events; a fresh secret every time (`rotateSecret`). */
      async create(this: IHookFunctions): Promise<boolean> {
        const url = this.getNodeWebhookUrl('default') as string;
        const body: Body<'/webhook', 'put'> = {
          url,
          events: selectedEvents(this) as NonNullable<Body<'/webhook', 'put'>['events']>,
          rotateSecret: true,
        };
        const set = await gatewayRequest<WebhookAnswer>(this, {
          method: 'put',
          path: '/webhook',
          body,
          waitOnRateLimitS: HOOK_RATE_LIMIT_WAIT_S,
        });
        const secret = set.body.data.secret;
        if (typeof secret !== 'string' || !secret.startsWith('whsec_')) {
          throw new NodeApiError(
            this.getNode(),
            {},
            { message: 'The gateway answered PUT /webhook without a secret' },
          );
        }
        const state = this.getWorkflowStaticData('node') as TriggerState;
        state.webhookUrl = url;
        state.webhookSecret = secret;
        return true;
      },

      /** DELETE /webhook, only when the device's webhook is still this trigger's URL. */
      async delete(this: IHookFunctions): Promise<boolean> {
        const state = this.getWorkflowStaticData('node') as TriggerState;
        const current = await currentWebhook(this);
        if (current !== undefined && current.url === this.getNodeWebhookUrl('default')) {
          await gatewayRequest(this, {
            method: 'delete',
            path: '/webhook',
            allow: [404],
            waitOnRateLimitS: HOOK_RATE_LIMIT_WAIT_S,
          });
        }
        delete state.webhookUrl;
        delete state.webhookSecret;
        return true;
      },
    },
  };

  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const req = this.getRequestObject() as ReturnType<IWebhookFunctions['getRequestObject']> & {
      rawBody?: Buffer;
      readRawBody?: () => Promise<void>;
    };
    if (!req.rawBody && typeof req.readRawBody === 'function') await req.readRawBody();
    const state = this.getWorkflowStaticData('node') as TriggerState;
    const headers = this.getHeaderData();
    const verdict = verifyDelivery(
      state.webhookSecret,
      {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
      },
      req.rawBody ?? Buffer.alloc(0),
      Math.floor(Date.now() / 1000),
    );
    if (!verdict.ok) {
      this.getResponseObject().status(401).json({ success: false, error: 'Invalid webhook signature' });
      return { noWebhookResponse: true };
    }
    if (!recent.firstTime(`${this.getWorkflow().id ?? ''}:${this.getNode().id}:${verdict.id}`, Date.now())) {
      return {}; // a delivery already taken: 200, nothing runs again
    }
    let event: { type?: unknown; timestamp?: unknown; data?: unknown };
    try {
      event = JSON.parse((req.rawBody as Buffer).toString('utf8')) as typeof event;
    } catch {
      this.getResponseObject().status(400).json({ success: false, error: 'The body is not JSON' });
      return { noWebhookResponse: true };
    }
    if (typeof event.type !== 'string' || !selectedEvents(this).includes(event.type)) return {};
    return {
      workflowData: [
        [
          {
            json: {
              id: verdict.id,
              type: event.type,
              timestamp: event.timestamp as string,
              data: (event.data ?? {}) as IDataObject,
            },
          },
        ],
      ],
    };
  }
}
