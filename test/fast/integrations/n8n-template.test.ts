/**
 * Issue 83: the n8n node's Send Template (integrations/n8n), read without n8n — the `template` of
 * POST /send it builds from its fields (held to the contract's own schema, libs/contracts
 * templates.ts), the fields it refuses before any request and why, its copy of the contract's
 * bounds, and the template lists it shows from GET /cloud/templates. n8n itself running the node
 * against a Cloud API device is test/integrations/n8n-templates.test.ts.
 */
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  STRING_LIMITS,
  TEMPLATE_LANGUAGE_PATTERN,
  TEMPLATE_LIMITS,
  TEMPLATE_NAME_PATTERN,
  templateSchema,
} from '@mgw/contracts';
import { ORDER_READY_COMPONENTS, ORDER_READY_PHOTO, TEMPLATE_LIST } from '../../support/n8n-templates.js';

const DIR = fileURLToPath(new URL('../../../integrations/n8n/nodes/MessengerGateway', import.meta.url));

type Fields = Record<string, unknown> & { name: string; language: string };
interface Template {
  name: string;
  language: string;
  components?: Array<Record<string, unknown>>;
}
interface TemplateModule {
  templateOf: (fields: Fields) => Template;
  TEMPLATE_LIMITS: Record<string, number>;
  TEMPLATE_NAME_PATTERN: RegExp;
  TEMPLATE_LANGUAGE_PATTERN: RegExp;
  LINK_MAX: number;
}
interface ListItem {
  name: string;
  value: string;
  description?: string;
}
interface Summary {
  name: string;
  language: string;
  status: string;
  category: string;
  parameters: Record<string, unknown>;
}
interface ListModule {
  templatesOf: (answer: unknown) => Summary[];
  templateNameItems: (templates: Summary[], filter?: string) => ListItem[];
  templateLanguageItems: (templates: Summary[], name?: string, filter?: string) => ListItem[];
}

/** The node's modules as its build compiles them (plain code: no n8n needed to load them). */
const load = async <T>(file: string) => (await import(pathToFileURL(path.join(DIR, file)).href)) as T;

/** What the contract's schema says of a `template` (undefined: accepted). */
const contractRefusal = (template: unknown) => templateSchema.validate(template).error?.message;

describe('n8n node: Send Template builds the contract’s `template` from its fields, refuses what the gateway would, and lists the device’s templates', () => {
  let m: TemplateModule;
  let list: ListModule;
  before(async () => {
    m = await load<TemplateModule>('template.ts');
    list = await load<ListModule>('template-list.ts');
  });

  const base = { name: 'order_ready', language: 'en_US' };
  /** The node's refusal of these fields (undefined: accepted). */
  const refusal = (fields: Record<string, unknown>) => {
    try {
      m.templateOf({ ...base, ...fields });
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  };

  it('When only a name and a language are given, then the template is them alone, without components', () => {
    expect(m.templateOf({ ...base })).to.deep.equal(base);
    expect(
      m.templateOf({ ...base, parametersMode: 'fields', bodyParameters: {}, buttonParameters: {} }),
    ).to.deep.equal(base);
    expect(m.templateOf({ name: ' order_ready ', language: 'en_US\n' }), 'trimmed').to.deep.equal(base);
  });

  it('When a header, body texts and buttons are filled in, then the components are Meta’s shape, in order, and the contract’s schema takes them', () => {
    const template = m.templateOf({
      ...base,
      parametersMode: 'fields',
      headerType: 'image',
      headerMedia: ORDER_READY_PHOTO,
      bodyParameters: { parameter: [{ text: 'Ada' }, { text: '#1234' }] },
      buttonParameters: {
        button: [
          { index: 0, type: 'url', value: '1234' },
          { index: 1, type: 'quick_reply', value: 'thanks-1234' },
          { index: 2, type: 'copy_code', value: 'SAVE10' },
        ],
      },
    });
    expect(template).to.deep.equal({ ...base, components: ORDER_READY_COMPONENTS });
    expect(contractRefusal(template)).to.equal(undefined);
  });

  it('When the header is a text, a media id, a video link or a named document, and the body’s placeholders are named, then each is the parameter the contract takes', () => {
    const header = (fields: Record<string, unknown>) => m.templateOf({ ...base, ...fields }).components![0];
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [
        { headerType: 'text', headerText: 'Order ready' },
        { type: 'text', text: 'Order ready' },
      ],
      [
        { headerType: 'image', headerMedia: '1234567890' },
        { type: 'image', image: { id: '1234567890' } },
      ],
      [
        { headerType: 'video', headerMedia: 'http://cdn.example/v.mp4' },
        { type: 'video', video: { link: 'http://cdn.example/v.mp4' } },
      ],
      [
        { headerType: 'document', headerMedia: 'https://cdn.example/i.pdf', headerFileName: 'invoice.pdf' },
        { type: 'document', document: { link: 'https://cdn.example/i.pdf', filename: 'invoice.pdf' } },
      ],
      // A file name goes with a document only.
      [
        { headerType: 'image', headerMedia: '42', headerFileName: 'x.jpg' },
        { type: 'image', image: { id: '42' } },
      ],
    ];
    for (const [fields, parameter] of cases) {
      expect(header(fields), JSON.stringify(fields)).to.deep.equal({
        type: 'header',
        parameters: [parameter],
      });
      expect(contractRefusal(m.templateOf({ ...base, ...fields })), JSON.stringify(fields)).to.equal(
        undefined,
      );
    }
    const named = m.templateOf({
      ...base,
      bodyParameters: {
        parameter: [
          { text: 'Ada', parameterName: 'first_name' },
          { text: '#1', parameterName: 'order' },
        ],
      },
    });
    expect(named.components).to.deep.equal([
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ada', parameter_name: 'first_name' },
          { type: 'text', text: '#1', parameter_name: 'order' },
        ],
      },
    ]);
    expect(contractRefusal(named)).to.equal(undefined);
  });

  it('When the components are given as JSON (text, or an array from an expression), then they go as given; an empty list is none', () => {
    const components = [
      {
        type: 'body',
        parameters: [
          { type: 'currency', currency: { fallback_value: '$10', code: 'USD', amount_1000: 10000 } },
        ],
      },
    ];
    const json = (componentsJson: unknown) =>
      m.templateOf({ ...base, parametersMode: 'json', componentsJson });
    expect(json(JSON.stringify(components))).to.deep.equal({ ...base, components });
    expect(json(components)).to.deep.equal({ ...base, components });
    // The fields of the other mode are not read.
    expect(
      m.templateOf({
        ...base,
        parametersMode: 'json',
        componentsJson: '[]',
        headerType: 'text',
        headerText: 'x',
      }),
    ).to.deep.equal(base);
    expect(json('')).to.deep.equal(base);
  });

  it('When a field holds what the gateway would refuse, then the node refuses it first, naming the field and why — and the contract’s schema refuses the same value', () => {
    const long = (n: number) => 'x'.repeat(n);
    // [the fields, the node's message, the same value as raw components for the contract's schema]
    const cases: Array<[Record<string, unknown>, string, unknown?]> = [
      [{ name: '' }, 'Template is required'],
      [
        { name: 'Order-Update' },
        'Template "Order-Update" is not a template name: 1 to 512 lower-case letters, digits and _',
      ],
      [{ language: '' }, 'Language is required'],
      [{ language: 'english' }, 'Language "english" is not a template language code such as en_US or ar'],
      [
        { bodyParameters: { parameter: [{ text: 'a' }, { text: '  ' }] } },
        'Body Parameter 2 is empty',
        [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'a' },
              { type: 'text', text: '' },
            ],
          },
        ],
      ],
      [
        { bodyParameters: { parameter: [{ text: 'two\nlines' }] } },
        'Body Parameter 1 has a line break, a tab or another control character: WhatsApp refuses them (error 132018)',
        [{ type: 'body', parameters: [{ type: 'text', text: 'two\nlines' }] }],
      ],
      [
        { bodyParameters: { parameter: [{ text: 'a     b' }] } },
        'Body Parameter 1 has more than 4 spaces in a row: WhatsApp refuses them (error 132018)',
        [{ type: 'body', parameters: [{ type: 'text', text: 'a     b' }] }],
      ],
      [
        { bodyParameters: { parameter: [{ text: long(1025) }] } },
        'Body Parameter 1 is 1025 characters: at most 1024',
        [{ type: 'body', parameters: [{ type: 'text', text: long(1025) }] }],
      ],
      [
        { bodyParameters: { parameter: Array.from({ length: 21 }, () => ({ text: 'a' })) } },
        'Body Parameters has 21: at most 20',
        [{ type: 'body', parameters: Array.from({ length: 21 }, () => ({ type: 'text', text: 'a' })) }],
      ],
      [
        { bodyParameters: { parameter: [{ text: 'a', parameterName: 'first_name' }, { text: 'b' }] } },
        'Body Parameters: give every parameter a name (a template with {{first_name}}) or none ({{1}}, {{2}})',
      ],
      [
        { bodyParameters: { parameter: [{ text: 'a', parameterName: 'First Name' }] } },
        'Body Parameter 1\'s name "First Name" is not a parameter name: lower-case letters, digits and _',
        [{ type: 'body', parameters: [{ type: 'text', text: 'a', parameter_name: 'First Name' }] }],
      ],
      [
        { headerType: 'text', headerText: long(61) },
        'Header Text is 61 characters: at most 60',
        [{ type: 'header', parameters: [{ type: 'text', text: long(61) }] }],
      ],
      [{ headerType: 'image', headerMedia: '' }, 'Header Media is required: an http(s) link or a media ID'],
      [
        { headerType: 'image', headerMedia: 'ftp://cdn.example/a.jpg' },
        'Header Media "ftp://cdn.example/a.jpg" is neither an http(s) link nor a media ID (digits)',
        [{ type: 'header', parameters: [{ type: 'image', image: { link: 'ftp://cdn.example/a.jpg' } }] }],
      ],
      [
        { headerType: 'image', headerMedia: '1'.repeat(65) },
        `Header Media "${'1'.repeat(65)}" is too long for a media ID`,
        [{ type: 'header', parameters: [{ type: 'image', image: { id: '1'.repeat(65) } }] }],
      ],
      [
        { headerType: 'document', headerMedia: '42', headerFileName: `${long(237)}.pdf` },
        'Header File Name is 241 characters: at most 240',
        [
          {
            type: 'header',
            parameters: [{ type: 'document', document: { id: '42', filename: `${long(237)}.pdf` } }],
          },
        ],
      ],
      [{ headerType: 'audio' }, 'Header "audio" is not a header type: none, text, image, video, document'],
      [
        { buttonParameters: { button: [{ index: 10, type: 'url', value: 'a' }] } },
        "Button index 10 is not a button's index: 0 to 9",
        [{ type: 'button', sub_type: 'url', index: 10, parameters: [{ type: 'text', text: 'a' }] }],
      ],
      [
        { buttonParameters: { button: [{ index: 1.5, type: 'url', value: 'a' }] } },
        "Button index 1.5 is not a button's index: 0 to 9",
      ],
      [
        {
          buttonParameters: {
            button: [
              { index: 0, type: 'url', value: 'a' },
              { index: 0, type: 'quick_reply', value: 'b' },
            ],
          },
        },
        'Button Parameters has two buttons of index 0',
        [
          { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: 'a' }] },
          {
            type: 'button',
            sub_type: 'quick_reply',
            index: 0,
            parameters: [{ type: 'payload', payload: 'b' }],
          },
        ],
      ],
      [
        { buttonParameters: { button: [{ index: 0, type: 'copy_code', value: 'SIXTEEN-CHARS-16' }] } },
        "Button 0's value is 16 characters: at most 15",
        [
          {
            type: 'button',
            sub_type: 'copy_code',
            index: 0,
            parameters: [{ type: 'coupon_code', coupon_code: 'SIXTEEN-CHARS-16' }],
          },
        ],
      ],
      [{ buttonParameters: { button: [{ index: 0, type: 'url', value: '' }] } }, "Button 0's value is empty"],
      [{ parametersMode: 'json', componentsJson: '[{"type": "body",' }, 'Components (JSON) is not JSON:'],
      [
        { parametersMode: 'json', componentsJson: '{"type": "body"}' },
        'Components (JSON) must be an array of components: [{ "type": "body", "parameters": [...] }]',
      ],
      [
        { parametersMode: 'json', componentsJson: '[{"parameters": []}]' },
        'Components (JSON) [0] must be an object whose type is header, body, button or footer',
      ],
      [
        {
          parametersMode: 'json',
          componentsJson: Array.from({ length: 11 }, () => ({ type: 'footer', parameters: [] })),
        },
        'Components (JSON) has 11 components: at most 10',
      ],
    ];
    for (const [fields, message, components] of cases) {
      const said = refusal(fields);
      expect(said, JSON.stringify(fields).slice(0, 200)).to.be.a('string');
      expect(said!.startsWith(message), `${said} should start with ${message}`).to.equal(true);
      if (components !== undefined)
        expect(contractRefusal({ ...base, components }), `the contract on ${message}`).to.be.a('string');
    }
  });

  it('When the node’s copy of the gateway’s bounds is read, then each equals the contract’s', () => {
    for (const [key, value] of Object.entries(m.TEMPLATE_LIMITS))
      expect(value, key).to.equal((TEMPLATE_LIMITS as Record<string, number>)[key]);
    expect(m.TEMPLATE_NAME_PATTERN.source).to.equal(TEMPLATE_NAME_PATTERN.source);
    expect(m.TEMPLATE_LANGUAGE_PATTERN.source).to.equal(TEMPLATE_LANGUAGE_PATTERN.source);
    expect(m.LINK_MAX).to.equal(STRING_LIMITS.url);
  });

  it('When GET /cloud/templates answers, then the Template list has one entry per name (category, languages, the unsendable ones marked), filtered by what is typed', () => {
    const answer = {
      success: true,
      data: {
        fetchedAt: '2026-11-30T12:00:00.000Z',
        templates: [
          {
            name: 'order_update',
            language: 'en_US',
            status: 'APPROVED',
            category: 'UTILITY',
            parameters: { body: 1 },
            components: [],
          },
          {
            name: 'order_update',
            language: 'ar',
            status: 'PAUSED',
            category: 'UTILITY',
            parameters: { body: 1 },
            components: [],
          },
          {
            name: 'coupon_drop',
            language: 'pt_BR',
            status: 'approved',
            category: 'MARKETING',
            parameters: { header: 1, body: 2, buttons: { 0: 1, 2: 1, 3: 'x' } },
            components: [],
          },
          {
            name: 'verification_code',
            language: 'en_US',
            status: 'APPROVED',
            category: 'AUTHENTICATION',
            parameters: {},
            components: [],
          },
          // Not a template the list can show: left out.
          { language: 'en_US', status: 'APPROVED' },
          'order_update',
          null,
        ],
      },
    };
    const templates = list.templatesOf(answer);
    expect(templates.map((t) => `${t.name} ${t.language}`)).to.deep.equal([
      'order_update en_US',
      'order_update ar',
      'coupon_drop pt_BR',
      'verification_code en_US',
    ]);
    expect(templates[2]).to.deep.equal({
      name: 'coupon_drop',
      language: 'pt_BR',
      status: 'APPROVED',
      category: 'MARKETING',
      parameters: { header: 1, body: 2, buttons: { 0: 1, 2: 1 } },
    });
    expect(list.templateNameItems(templates)).to.deep.equal([
      { name: 'coupon_drop', value: 'coupon_drop', description: 'MARKETING · pt_BR' },
      { name: 'order_update', value: 'order_update', description: 'UTILITY · ar (PAUSED), en_US' },
      { name: 'verification_code', value: 'verification_code', description: 'AUTHENTICATION · en_US' },
    ]);
    expect(list.templateNameItems(templates, ' ORDER').map((i) => i.value)).to.deep.equal(['order_update']);
    expect(list.templateNameItems(templates, 'nothing like it')).to.deep.equal([]);

    for (const bad of [
      { success: true, data: {} },
      { success: true },
      null,
      'templates',
      { data: { templates: 'x' } },
    ])
      expect(() => list.templatesOf(bad), JSON.stringify(bad)).to.throw(
        "The gateway's answer holds no template list",
      );
  });

  it('When a template is chosen, then the Language list has its languages with their status and the parameters each takes; none chosen, every language', () => {
    const templates = list.templatesOf({ data: { templates: TEMPLATE_LIST } });
    expect(list.templateLanguageItems(templates, 'order_update')).to.deep.equal([
      { name: 'ar', value: 'ar', description: 'PAUSED · parameters: body 1' },
      { name: 'en_US', value: 'en_US', description: 'APPROVED · parameters: body 1' },
    ]);
    expect(list.templateLanguageItems(templates, 'coupon_drop')).to.deep.equal([
      { name: 'pt_BR', value: 'pt_BR', description: 'APPROVED · parameters: header 1, body 2, button 0: 1' },
    ]);
    expect(list.templateLanguageItems(templates, 'hello')[0]!.description).to.equal(
      'APPROVED · no parameters',
    );
    expect(list.templateLanguageItems(templates, 'order_update', 'en')).to.deep.equal([
      { name: 'en_US', value: 'en_US', description: 'APPROVED · parameters: body 1' },
    ]);
    expect(list.templateLanguageItems(templates)).to.deep.equal([
      { name: 'ar', value: 'ar' },
      { name: 'en_US', value: 'en_US' },
      { name: 'pt_BR', value: 'pt_BR' },
    ]);
    expect(list.templateLanguageItems(templates, 'no_such')).to.deep.equal([]);
  });
});
