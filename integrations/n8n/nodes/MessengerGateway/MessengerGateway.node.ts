import type {
  IDataObject,
  IExecuteFunctions,
  INodeExecutionData,
  INodeType,
  INodeTypeDescription,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import { OPERATIONS } from './operations';
import { Params } from './params';
import { properties } from './properties';
import { templateSearch } from './template-search';
import { fillPath, gatewayRequest } from './transport';

/**
 * The Messenger Gateway's API as an n8n action node: each resource/operation pair is one API call
 * (operations.ts), its body typed from the API's OpenAPI document.
 */
export class MessengerGateway implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Messenger Gateway',
    name: 'messengerGateway',
    icon: {
      light: 'file:../../icons/messenger-gateway.svg',
      dark: 'file:../../icons/messenger-gateway.dark.svg',
    },
    group: ['output'],
    version: 1,
    subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
    description: 'Send WhatsApp messages, media, lists, templates and OTPs through a Messenger Gateway',
    defaults: { name: 'Messenger Gateway' },
    usableAsTool: true,
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'messengerGatewayApi', required: true }],
    properties,
  };

  methods = { listSearch: templateSearch };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const returnData: INodeExecutionData[] = [];
    for (let i = 0; i < items.length; i++) {
      try {
        const resource = this.getNodeParameter('resource', i) as string;
        const operation = this.getNodeParameter('operation', i) as string;
        const spec = OPERATIONS[`${resource}:${operation}`];
        if (!spec) {
          throw new NodeOperationError(this.getNode(), `Unknown operation "${operation}" of "${resource}"`, {
            itemIndex: i,
          });
        }
        const request = await spec.request(new Params(this, i));
        const { body } = await gatewayRequest(this, {
          method: spec.method,
          path: fillPath(spec.route, request.path),
          body: request.body,
          headers: request.idempotencyKey ? { 'Idempotency-Key': request.idempotencyKey } : undefined,
          itemIndex: i,
        });
        const output = spec.output(body);
        for (const json of Array.isArray(output) ? output : [output]) {
          returnData.push({ json, pairedItem: { item: i } });
        }
      } catch (error) {
        const failure =
          error instanceof NodeApiError || error instanceof NodeOperationError
            ? error
            : new NodeOperationError(this.getNode(), error as Error, { itemIndex: i });
        if (this.continueOnFail()) {
          const json: IDataObject = { error: failure.message };
          if (failure.description) json.details = failure.description;
          if (failure instanceof NodeApiError && failure.httpCode) json.httpCode = failure.httpCode;
          returnData.push({ json, pairedItem: { item: i } });
          continue;
        }
        throw failure;
      }
    }
    return [returnData];
  }
}
