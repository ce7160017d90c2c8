import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  INodeProperties,
} from 'n8n-workflow';

/**
 * The gateway's address, an API token and, for a workspace token, the device it acts on. A device
 * token acts on its device (a pool token sends through its pool): the nodes act on that device. A
 * workspace token acts on any device of its workspace, named in the path
 * (`/api/messenger/v1/devices/{deviceId}/…`): the Device ID here, or the node's own Device ID.
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
    {
      displayName: 'Device ID',
      name: 'deviceId',
      type: 'string',
      default: '',
      placeholder: 'e.g. d0123456789abcdef',
      description:
        "For a workspace token: the device the nodes act on (a node's own Device ID overrides it). Leave empty for a device token: the nodes then act on the token's device.",
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

  /**
   * GET /status with the token (`/devices/{deviceId}/status` with a Device ID): 200 for a valid
   * token, 401 `Invalid API token` otherwise; a workspace token without a Device ID 400, and with
   * one its workspace does not own 404 `Device not found`.
   */
  test: ICredentialTestRequest = {
    request: {
      baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}/api/messenger/v1',
      url: '={{($credentials.deviceId || "").trim() ? "/devices/" + encodeURIComponent(($credentials.deviceId || "").trim()) : ""}}/status',
      method: 'GET',
    },
  };
}
