import { FAILURE_REASONS, type TemplateInput, type ValidationDetail } from '@mgw/contracts';
import { invalid, type Refusal } from '../../enqueue/refusal.js';
import type { CatalogEntry } from './template-catalog.js';
import type { TemplateParams } from './template-components.js';

/**
 * Whether a `template` of /send can be sent as given, judged against the number's templates of
 * that name (`TemplateCatalog.named`): it exists in that language (422 `template_not_found`
 * otherwise, naming the languages it does exist in), it is APPROVED (422: paused, or pending,
 * rejected, disabled), and each component has as many parameters as the template's text has
 * placeholders (400, naming the component). What Meta would refuse is refused here, before a
 * message is queued that could only fail.
 */
export function templateRefusal(input: TemplateInput, named: CatalogEntry[]): Refusal | undefined {
  const quoted = `"${input.name}" (${input.language})`;
  const template = named.find((t) => t.language === input.language);
  if (!template) {
    const elsewhere = named.map((t) => t.language).sort();
    return {
      kind: 'refused',
      reason: 'template_not_found',
      details: [
        {
          path: ['template'],
          message:
            elsewhere.length > 0
              ? `No template ${quoted} in the number's WhatsApp Business Account: it exists in ${elsewhere.join(', ')}`
              : `No template ${quoted} in the number's WhatsApp Business Account`,
          reason: FAILURE_REASONS.templateNotFound,
        },
      ],
    };
  }
  if (template.status !== 'APPROVED') {
    const paused = template.status === 'PAUSED';
    return {
      kind: 'refused',
      reason: 'template_not_approved',
      details: [
        {
          path: ['template'],
          message: paused
            ? `Template ${quoted} is paused by WhatsApp (its quality is low): it cannot be sent until it is active again`
            : `Template ${quoted} is not approved: its status is ${template.status}`,
          reason: paused ? FAILURE_REASONS.templatePaused : FAILURE_REASONS.templateNotFound,
        },
      ],
    };
  }
  const problems = parameterProblems(input, template.params);
  return problems.length > 0 ? invalid(problems) : undefined;
}

/** Each component whose parameters are not as many as the template's placeholders. */
function parameterProblems(input: TemplateInput, expected: TemplateParams): ValidationDetail[] {
  const given = (input.components ?? []) as { type: string; index?: number; parameters: unknown[] }[];
  const slots: { label: string; want: number; at: number }[] = [];
  const find = (type: string, index?: number) =>
    given.findIndex((c) => c.type === type && (index === undefined || c.index === index));
  if (expected.header !== undefined)
    slots.push({ label: 'header', want: expected.header, at: find('header') });
  if (expected.body !== undefined) slots.push({ label: 'body', want: expected.body, at: find('body') });
  for (const [index, want] of Object.entries(expected.buttons ?? {}))
    slots.push({ label: `button ${index}`, want, at: find('button', Number(index)) });
  const problems: ValidationDetail[] = [];
  for (const { label, want, at } of slots) {
    const count = at < 0 ? 0 : given[at]!.parameters.length;
    if (count === want) continue;
    problems.push({
      path: at < 0 ? ['template', 'components'] : ['template', 'components', at, 'parameters'],
      message: `template ${input.name} (${input.language}): its ${label} takes ${want} parameter${want === 1 ? '' : 's'}, ${count} given`,
    });
  }
  // Parameters for a header or a body the template has no placeholders in (or no such component).
  for (const [at, c] of given.entries()) {
    if (c.type !== 'header' && c.type !== 'body') continue;
    if (expected[c.type] === undefined && c.parameters.length > 0)
      problems.push({
        path: ['template', 'components', at, 'parameters'],
        message: `template ${input.name} (${input.language}): its ${c.type} takes no parameters, ${c.parameters.length} given`,
      });
  }
  return problems;
}
