import type { INodeProperties } from 'n8n-workflow';
import { sendOptions, show, to } from './message-fields';
import { TEMPLATE_LANGUAGE_PATTERN, TEMPLATE_LIMITS, TEMPLATE_NAME_PATTERN } from './template';

/**
 * Message → Send Template (POST /send with `template`, Cloud API devices; template.ts builds the
 * body). The template and its language are picked from the device's list (the node's
 * listSearch methods, GET /cloud/templates) or typed in; the parameters are fields — body texts
 * in order, a header, button values by index — or Meta's components as JSON.
 */
const shown = show('message', ['sendTemplate']);
const withMode = (mode: string, extra: Record<string, string[]> = {}) => ({
  show: { resource: ['message'], operation: ['sendTemplate'], parametersMode: [mode], ...extra },
});

export const templateFields: INodeProperties[] = [
  to(
    ['sendTemplate'],
    'A phone number in international format, digits only (15551234567), a LID (…@lid) or a WhatsApp username (@alice.shop); several separated by commas, spaces or line breaks (or an expression giving an array) go as one batch',
  ),
  {
    displayName: 'Template',
    name: 'templateName',
    type: 'resourceLocator',
    required: true,
    default: { mode: 'list', value: '' },
    description: "An approved template of the Cloud API number's WhatsApp Business Account",
    displayOptions: shown,
    modes: [
      {
        displayName: 'From List',
        name: 'list',
        type: 'list',
        typeOptions: { searchListMethod: 'searchTemplates', searchable: true },
      },
      {
        displayName: 'By Name',
        name: 'name',
        type: 'string',
        placeholder: 'e.g. order_update',
        validation: [
          {
            type: 'regex',
            properties: {
              regex: TEMPLATE_NAME_PATTERN.source,
              errorMessage: 'A template name: 1 to 512 lower-case letters, digits and _',
            },
          },
        ],
      },
    ],
  },
  {
    displayName: 'Language',
    name: 'templateLanguage',
    type: 'resourceLocator',
    required: true,
    default: { mode: 'list', value: '' },
    description: "The template's language as the WhatsApp Business Account lists it",
    displayOptions: shown,
    modes: [
      {
        displayName: 'From List',
        name: 'list',
        type: 'list',
        typeOptions: { searchListMethod: 'searchTemplateLanguages', searchable: true },
      },
      {
        displayName: 'By Code',
        name: 'code',
        type: 'string',
        placeholder: 'e.g. en_US',
        validation: [
          {
            type: 'regex',
            properties: {
              regex: TEMPLATE_LANGUAGE_PATTERN.source,
              errorMessage: 'A language code such as en_US, ar or pt_BR',
            },
          },
        ],
      },
    ],
  },
  {
    displayName: 'Parameters',
    name: 'parametersMode',
    type: 'options',
    options: [
      {
        name: 'Components (JSON)',
        value: 'json',
        description: "The components in Meta's shape: any parameter type (currency, date_time…)",
      },
      {
        name: 'Fields',
        value: 'fields',
        description: 'Body texts, a header, button values',
      },
    ],
    default: 'fields',
    description: "How the template's placeholders are filled",
    displayOptions: shown,
  },
  {
    displayName: 'Header',
    name: 'headerType',
    type: 'options',
    options: [
      { name: 'Document', value: 'document' },
      { name: 'Image', value: 'image' },
      {
        name: 'None',
        value: 'none',
        description: 'The template has no header, or one without a placeholder',
      },
      { name: 'Text', value: 'text', description: "The value of the header text's placeholder" },
      { name: 'Video', value: 'video' },
    ],
    default: 'none',
    description: "The header's parameter",
    displayOptions: withMode('fields'),
  },
  {
    displayName: 'Header Text',
    name: 'headerText',
    type: 'string',
    required: true,
    default: '',
    description: `The header placeholder's value, at most ${TEMPLATE_LIMITS.headerText} characters`,
    displayOptions: withMode('fields', { headerType: ['text'] }),
  },
  {
    displayName: 'Header Media',
    name: 'headerMedia',
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. https://example.com/order.jpg',
    description:
      'An http(s) link WhatsApp downloads the file from, or the ID (digits) of a file uploaded to the Cloud API',
    displayOptions: withMode('fields', { headerType: ['image', 'video', 'document'] }),
  },
  {
    displayName: 'Header File Name',
    name: 'headerFileName',
    type: 'string',
    default: '',
    placeholder: 'e.g. invoice.pdf',
    description: "The document's name as the contact sees it",
    displayOptions: withMode('fields', { headerType: ['document'] }),
  },
  {
    displayName: 'Body Parameters',
    name: 'bodyParameters',
    type: 'fixedCollection',
    typeOptions: { multipleValues: true, sortable: true },
    placeholder: 'Add Body Parameter',
    default: {},
    description: "The values of the body's placeholders, in order: {{1}}, {{2}}…",
    displayOptions: withMode('fields'),
    options: [
      {
        displayName: 'Parameter',
        name: 'parameter',
        values: [
          {
            displayName: 'Text',
            name: 'text',
            type: 'string',
            default: '',
            description: `At most ${TEMPLATE_LIMITS.text} characters, on one line (no line breaks or tabs, at most 4 spaces in a row)`,
          },
          {
            displayName: 'Parameter Name',
            name: 'parameterName',
            type: 'string',
            default: '',
            placeholder: 'e.g. first_name',
            description:
              'For a template with named placeholders ({{first_name}}): the name; leave empty for {{1}}, {{2}}…',
          },
        ],
      },
    ],
  },
  {
    displayName: 'Button Parameters',
    name: 'buttonParameters',
    type: 'fixedCollection',
    typeOptions: { multipleValues: true },
    placeholder: 'Add Button Parameter',
    default: {},
    description:
      "The values of the template's buttons that take one, by the button's index (0 for the first)",
    displayOptions: withMode('fields'),
    options: [
      {
        displayName: 'Button',
        name: 'button',
        values: [
          {
            displayName: 'Index',
            name: 'index',
            type: 'number',
            typeOptions: { minValue: 0, maxValue: TEMPLATE_LIMITS.maxButtonIndex },
            default: 0,
            description: "The button's position in the template, 0 for the first",
          },
          {
            displayName: 'Type',
            name: 'type',
            type: 'options',
            options: [
              {
                name: 'Copy Code',
                value: 'copy_code',
                description: `The code the button copies, at most ${TEMPLATE_LIMITS.couponCode} characters`,
              },
              {
                name: 'Quick Reply',
                value: 'quick_reply',
                description: "A payload returned with the contact's tap",
              },
              { name: 'URL', value: 'url', description: "The value of the button URL's placeholder" },
            ],
            default: 'url',
          },
          {
            displayName: 'Value',
            name: 'value',
            type: 'string',
            default: '',
          },
        ],
      },
    ],
  },
  {
    displayName: 'Components (JSON)',
    name: 'componentsJson',
    type: 'json',
    default: '[]',
    description:
      'The template\'s components as the Cloud API takes them: [{ "type": "body", "parameters": [{ "type": "text", "text": "#1234" }] }]',
    displayOptions: withMode('json'),
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: shown,
    // A template is the whole message: no link preview.
    options: sendOptions.filter((o) => o.name !== 'linkPreview'),
  },
];
