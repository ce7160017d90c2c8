import type { IDataObject } from 'n8n-workflow';
import type { Params } from './params';
import type { Answer, Body, BodyPath, Method, PathParams, Route } from './transport';
import { withoutSuccess } from './transport';
import { templateOf, type TemplateFields } from './template';

interface OperationRequest<R extends Route, M extends Method> {
  body?: Body<R, M>;
  path?: PathParams<R, M>;
  idempotencyKey?: string;
}

/**
 * One operation of the node: the API route it calls and, typed from the API's document, the body
 * it builds (a field the document does not have fails the build). `fields` says which node
 * parameter fills which body field (`options.x`: the operation's Options collection), and
 * `pathFields` which fills which path parameter; test/integrations/n8n-api-types.test.ts checks
 * both against the node's parameters and the document.
 */
interface OperationSpec<R extends Route, M extends Method> {
  route: R;
  method: M;
  fields: { [parameter: string]: BodyPath<Body<R, M>> };
  pathFields?: { [parameter: string]: keyof PathParams<R, M> & string };
  request(p: Params): Promise<OperationRequest<R, M>>;
  output(answer: Answer<R, M>): IDataObject | IDataObject[];
}

/** An operation as execute() runs it, its types erased. */
export interface RuntimeOperation {
  route: string;
  method: Method;
  fields: Record<string, string>;
  pathFields?: Record<string, string>;
  request(p: Params): Promise<{ body?: unknown; path?: Record<string, string>; idempotencyKey?: string }>;
  output(answer: unknown): IDataObject | IDataObject[];
}

const define = <R extends Route, M extends Method>(spec: OperationSpec<R, M>): RuntimeOperation =>
  spec as unknown as RuntimeOperation;

type SendBody = Body<'/send', 'post'>;
type MediaType = NonNullable<SendBody['attachment']>['type'];

/** The Options shared by the sends: link preview, reply, schedule. */
function sendOptions(body: SendBody, p: Params): SendBody {
  const replyTo = p.optional('options.replyTo');
  const sendAt = p.dateTime('options.sendAt');
  if (replyTo !== undefined) body.existingMessageId = replyTo;
  if (sendAt !== undefined) body.sendAt = sendAt;
  if (p.options().linkPreview !== undefined) body.linkPreview = p.flag('options.linkPreview', true);
  return body;
}
const SEND_OPTION_FIELDS = {
  'options.replyTo': 'existingMessageId',
  'options.sendAt': 'sendAt',
  'options.linkPreview': 'linkPreview',
} as const;

const idempotencyKey = (p: Params) => p.optional('options.idempotencyKey');

export const OPERATIONS: Record<string, RuntimeOperation> = {
  'message:sendText': define({
    route: '/send',
    method: 'post',
    fields: { to: 'to', text: 'text', ...SEND_OPTION_FIELDS },
    async request(p) {
      const body = sendOptions({ to: p.required('to', 'To'), text: p.required('text', 'Text') }, p);
      return { body, idempotencyKey: idempotencyKey(p) };
    },
    output: (answer) => withoutSuccess(answer),
  }),

  'message:sendMedia': define({
    route: '/send',
    method: 'post',
    fields: {
      to: 'to',
      mediaType: 'attachment.type',
      binaryPropertyName: 'attachment.base64',
      url: 'attachment.url',
      mediaId: 'attachment.mediaId',
      caption: 'attachment.caption',
      'options.fileName': 'attachment.filename',
      'options.mimeType': 'attachment.mimeType',
      'options.replyTo': 'existingMessageId',
      'options.sendAt': 'sendAt',
    },
    async request(p) {
      const attachment: NonNullable<SendBody['attachment']> = {
        type: p.required('mediaType', 'Media Type') as MediaType,
      };
      const source = p.required('source', 'Source');
      if (source === 'binary') {
        const file = await p.binary(p.required('binaryPropertyName', 'Input Binary Field'));
        attachment.base64 = file.base64;
        if (file.mimeType) attachment.mimeType = file.mimeType;
        if (file.fileName) attachment.filename = file.fileName;
      } else if (source === 'url') attachment.url = p.required('url', 'URL');
      else attachment.mediaId = p.required('mediaId', 'Media ID');
      const caption = p.optional('caption');
      const fileName = p.optional('options.fileName');
      const mimeType = p.optional('options.mimeType');
      if (caption !== undefined) attachment.caption = caption;
      if (fileName !== undefined) attachment.filename = fileName;
      if (mimeType !== undefined) attachment.mimeType = mimeType;
      const body = sendOptions({ to: p.required('to', 'To'), attachment }, p);
      return { body, idempotencyKey: idempotencyKey(p) };
    },
    output: (answer) => withoutSuccess(answer),
  }),

  'message:sendToList': define({
    route: '/send',
    method: 'post',
    fields: {
      recipients: 'to',
      text: 'text',
      'options.mediaUrl': 'attachment.url',
      'options.mediaType': 'attachment.type',
      ...SEND_OPTION_FIELDS,
    },
    async request(p) {
      const body: SendBody = { to: p.list('recipients', 'Recipients'), text: p.required('text', 'Text') };
      const mediaUrl = p.optional('options.mediaUrl');
      if (mediaUrl !== undefined) {
        body.attachment = { type: (p.optional('options.mediaType') ?? 'image') as MediaType, url: mediaUrl };
      }
      return { body: sendOptions(body, p), idempotencyKey: idempotencyKey(p) };
    },
    // To a list the gateway answers the batch's id as `messageId`, one id per recipient in `messageIds`.
    output: (answer) => ({
      batchId: answer.messageId,
      messageIds: 'messageIds' in answer ? (answer.messageIds ?? []) : [],
    }),
  }),

  'message:sendTemplate': define({
    route: '/send',
    method: 'post',
    fields: {
      to: 'to',
      templateName: 'template.name',
      templateLanguage: 'template.language',
      parametersMode: 'template.components',
      headerType: 'template.components',
      headerText: 'template.components',
      headerMedia: 'template.components',
      headerFileName: 'template.components',
      bodyParameters: 'template.components',
      buttonParameters: 'template.components',
      componentsJson: 'template.components',
      'options.replyTo': 'existingMessageId',
      'options.sendAt': 'sendAt',
    },
    async request(p) {
      const recipients = p.list('to', 'To');
      const template = templateOf({
        name: p.locator('templateName'),
        language: p.locator('templateLanguage'),
        parametersMode: p.optional('parametersMode'),
        headerType: p.optional('headerType'),
        headerText: p.value('headerText'),
        headerMedia: p.value('headerMedia'),
        headerFileName: p.value('headerFileName'),
        bodyParameters: p.value('bodyParameters') as TemplateFields['bodyParameters'],
        buttonParameters: p.value('buttonParameters') as TemplateFields['buttonParameters'],
        componentsJson: p.value('componentsJson'),
      });
      // One recipient: one message; several: one batch. (Its Options have no Link Preview: a
      // template is the whole message.)
      const to = recipients.length === 1 ? recipients[0]! : recipients;
      return { body: sendOptions({ to, template }, p), idempotencyKey: idempotencyKey(p) };
    },
    // As Send Text for one recipient ({ messageId }), as Send to List for several.
    output: (answer) =>
      'messageIds' in answer && answer.messageIds
        ? { batchId: answer.messageId, messageIds: answer.messageIds }
        : withoutSuccess(answer),
  }),

  'message:get': define({
    route: '/messages/{id}',
    method: 'get',
    fields: {},
    pathFields: { messageId: 'id' },
    request: async (p) => ({ path: { id: p.required('messageId', 'Message ID') } }),
    output: (answer) => answer.data as IDataObject,
  }),

  'message:markRead': define({
    route: '/messages/{id}/read',
    method: 'post',
    fields: {},
    pathFields: { messageId: 'id' },
    request: async (p) => ({ path: { id: p.required('messageId', 'Message ID') } }),
    output: (answer) => answer.data as IDataObject,
  }),

  'chat:markRead': define({
    route: '/chats/{chatId}/read',
    method: 'post',
    fields: {},
    pathFields: { chatId: 'chatId' },
    request: async (p) => ({ path: { chatId: p.required('chatId', 'Chat ID') } }),
    output: (answer) => answer.data as IDataObject,
  }),

  'otp:send': define({
    route: '/otp',
    method: 'post',
    fields: { phone: 'phone', code: 'code', language: 'language' },
    async request(p) {
      const language = (p.optional('language') ?? 'English') as Body<'/otp', 'post'>['language'];
      const body: Body<'/otp', 'post'> = {
        phone: p.required('phone', 'Phone'),
        code: p.required('code', 'Code'),
        language,
      };
      return { body, idempotencyKey: idempotencyKey(p) };
    },
    // The code is the workflow's own input: it is not copied into the output (execution data).
    output: (answer) => {
      const data = { ...(answer.data as IDataObject) };
      delete data.code;
      return data;
    },
  }),

  'contact:check': define({
    route: '/contacts/check',
    method: 'post',
    fields: { phones: 'phones' },
    request: async (p) => ({ body: { phones: p.list('phones', 'Phones') } }),
    output: (answer) => answer.data.results as IDataObject[],
  }),

  'contact:resolveUsername': define({
    route: '/contacts/username',
    method: 'post',
    fields: { username: 'username', pin: 'pin' },
    async request(p) {
      const pin = p.optional('pin');
      return {
        body: { username: p.required('username', 'Username'), ...(pin !== undefined ? { pin } : {}) },
      };
    },
    // The PIN is the workflow's own input: it is not copied into the output (execution data).
    output: (answer) => answer.data as IDataObject,
  }),

  'batch:get': define({
    route: '/batches/{batchId}',
    method: 'get',
    fields: {},
    pathFields: { batchId: 'batchId' },
    request: async (p) => ({ path: { batchId: p.required('batchId', 'Batch ID') } }),
    output: (answer) => answer.data as IDataObject,
  }),

  'connection:getStatus': define({
    route: '/status',
    method: 'get',
    fields: {},
    request: async () => ({}),
    output: (answer) => withoutSuccess(answer),
  }),

  'group:getAll': define({
    route: '/groups',
    method: 'get',
    fields: {},
    request: async () => ({}),
    output: (answer) => answer.data.groups as IDataObject[],
  }),

  'group:send': define({
    route: '/send',
    method: 'post',
    fields: { groupId: 'to', text: 'text', 'options.mentions': 'mentions', ...SEND_OPTION_FIELDS },
    async request(p) {
      const to = p.required('groupId', 'Group ID');
      if (!/@g\.us$/.test(to))
        throw new Error(`Group ID must be a group's id (…@g.us, from Get Many): "${to}"`);
      const body = sendOptions({ to, text: p.required('text', 'Text') }, p);
      if (p.optional('options.mentions') !== undefined)
        body.mentions = p.list('options.mentions', 'Mentions');
      return { body, idempotencyKey: idempotencyKey(p) };
    },
    output: (answer) => withoutSuccess(answer),
  }),

  'label:getAll': define({
    route: '/labels',
    method: 'get',
    fields: {},
    request: async () => ({}),
    output: (answer) => answer.data.labels as IDataObject[],
  }),

  'label:addToChat': define({
    route: '/chats/{chatId}/labels',
    method: 'post',
    fields: { labelId: 'labelId' },
    pathFields: { chatId: 'chatId' },
    request: async (p) => ({
      path: { chatId: p.required('chatId', 'Chat ID') },
      body: { labelId: p.required('labelId', 'Label ID') },
    }),
    output: (answer) => answer.data as IDataObject,
  }),

  'label:removeFromChat': define({
    route: '/chats/{chatId}/labels/{labelId}',
    method: 'delete',
    fields: {},
    pathFields: { chatId: 'chatId', labelId: 'labelId' },
    request: async (p) => ({
      path: { chatId: p.required('chatId', 'Chat ID'), labelId: p.required('labelId', 'Label ID') },
    }),
    output: (answer) => answer.data as IDataObject,
  }),

  'status:post': define({
    route: '/statuses',
    method: 'post',
    fields: {
      text: 'text',
      mediaType: 'attachment.type',
      url: 'attachment.url',
      binaryPropertyName: 'attachment.base64',
      caption: 'attachment.caption',
      audience: 'audience',
      'options.backgroundColor': 'backgroundColor',
      'options.font': 'font',
      'options.sendAt': 'sendAt',
    },
    async request(p) {
      type StatusBody = Body<'/statuses', 'post'>;
      const audience: StatusBody['audience'] =
        p.required('audienceMode', 'Audience') === 'contacts' ? 'contacts' : p.list('audience', 'Audience');
      const body: StatusBody = { audience };
      if (p.required('kind', 'Kind') === 'text') {
        body.text = p.required('text', 'Text');
        const backgroundColor = p.optional('options.backgroundColor');
        const font = p.optional('options.font') as StatusBody['font'];
        if (backgroundColor !== undefined) body.backgroundColor = backgroundColor;
        if (font !== undefined) body.font = font;
      } else {
        const type = p.required('mediaType', 'Media Type') as NonNullable<StatusBody['attachment']>['type'];
        const attachment: NonNullable<StatusBody['attachment']> = { type };
        if (p.required('source', 'Source') === 'binary') {
          const file = await p.binary(p.required('binaryPropertyName', 'Input Binary Field'));
          attachment.base64 = file.base64;
          if (file.mimeType) attachment.mimeType = file.mimeType;
        } else attachment.url = p.required('url', 'URL');
        const caption = p.optional('caption');
        if (caption !== undefined) attachment.caption = caption;
        body.attachment = attachment;
      }
      const sendAt = p.dateTime('options.sendAt');
      if (sendAt !== undefined) body.sendAt = sendAt;
      return { body, idempotencyKey: idempotencyKey(p) };
    },
    output: (answer) => answer.data as IDataObject,
  }),
};
