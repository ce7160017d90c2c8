import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';
import { templateLanguageItems, templateNameItems, templatesOf } from './template-list';
import { gatewayRequest } from './transport';

/**
 * The Send Template's lists (n8n's listSearch methods): the device's templates by name, then the
 * chosen one's languages, read from `GET /cloud/templates` on the device the credential or the
 * node's Device ID names. A linked device answers 404 (it has no templates): the list shows the
 * gateway's error, and the fields still take a name and a code typed in.
 */
async function deviceTemplates(ctx: ILoadOptionsFunctions) {
  const { body } = await gatewayRequest<unknown>(ctx, { method: 'get', path: '/cloud/templates' });
  return templatesOf(body);
}

export const templateSearch = {
  async searchTemplates(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
    return { results: templateNameItems(await deviceTemplates(this), filter) };
  },

  async searchTemplateLanguages(
    this: ILoadOptionsFunctions,
    filter?: string,
  ): Promise<INodeListSearchResult> {
    const name = this.getCurrentNodeParameter('templateName', { extractValue: true });
    const chosen = typeof name === 'string' && name.trim() !== '' ? name.trim() : undefined;
    return { results: templateLanguageItems(await deviceTemplates(this), chosen, filter) };
  },
};
