import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  INodeProperties,
} from 'n8n-workflow';

/**
 * The gateway's address and an API token. The token acts on one device (or, a pool token, sends
 * through a pool): the nodes act on that device.
 */
export class MessengerGatewayApi implements ICredentialType {
  name = 'messengerGatewayApi';

  displayName = 'Messenger Gateway API';

  icon = {
    light: 'file:../icons/messenger-gateway.svg',
    dark: 'file:../icons/messenger-gateway.dark.svg',
  } as const;

  documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-messenger-gateway';

  properties: INodeProperties[] = [
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      default: '',
      placeholder: 'https://gateway.example.com',
      description:
        'Where the gateway answers, without the API path (the nodes add /api/messenger/v1), e.g. http://127.0.0.1:3000',
      required: true,
    },
    {
      displayName: 'API Token',
      name: 'apiToken',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      description:
        'An API token of the gateway (mgw_…): the dashboard (Settings → API) or `npm run token -- create` prints it once',
      required: true,
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: {
        Authorization: '=Bearer {{$credentials.apiToken}}',
      },
    },
  };

  /** GET /status with the token: 200 for a valid token, 401 `Invalid API token` otherwise. */
  test: ICredentialTestRequest = {
    request: {
      baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}/api/messenger/v1',
      url: '/status',
      method: 'GET',
    },
  };
}
