import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** The gateway's attachment limit: 10 MiB decoded (api.md, POST /send; media.md). */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

export interface BinaryAttachment {
  base64: string;
  mimeType?: string;
  fileName?: string;
}

/**
 * Reads one item's node parameters. Empty strings mean "not set": the gateway refuses empty
 * strings, and n8n's default for an unfilled string field is ''.
 */
export class Params {
  constructor(
    readonly ctx: IExecuteFunctions,
    readonly itemIndex: number,
  ) {}

  private fail(message: string): never {
    throw new NodeOperationError(this.ctx.getNode(), message, { itemIndex: this.itemIndex });
  }

  private raw(name: string): unknown {
    if (name.startsWith('options.')) return this.options()[name.slice('options.'.length)];
    return this.ctx.getNodeParameter(name, this.itemIndex, '');
  }

  /** The "Options" collection of the operation ({} when none are added). */
  options(): IDataObject {
    return this.ctx.getNodeParameter('options', this.itemIndex, {}) as IDataObject;
  }

  /** A parameter as n8n gives it (a fixedCollection's `{ group: [values] }`, a JSON field's text…). */
  value(name: string): unknown {
    return this.raw(name);
  }

  /** A resource locator's value, whichever mode it was given in (from a list, typed in); '' when unset. */
  locator(name: string): string {
    const value = this.ctx.getNodeParameter(name, this.itemIndex, '', { extractValue: true });
    return value === undefined || value === null ? '' : String(value).trim();
  }

  /** A string parameter, trimmed; undefined when empty. */
  optional(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined || value === null) return undefined;
    const text = typeof value === 'string' ? value : String(value);
    return text.trim() === '' ? undefined : text;
  }

  /** A string parameter that must be set. */
  required(name: string, label: string): string {
    return this.optional(name) ?? this.fail(`${label} is required`);
  }

  /** A boolean parameter; `fallback` when unset. */
  flag(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    return typeof value === 'boolean' ? value : fallback;
  }

  /**
   * A list of numbers or ids: an array (from an expression), or a string of entries separated by
   * commas, semicolons, spaces or line breaks.
   */
  list(name: string, label: string): string[] {
    const value = this.raw(name);
    const entries = Array.isArray(value)
      ? value.map((v) => String(v).trim())
      : String(value ?? '')
          .split(/[\s,;]+/)
          .map((v) => v.trim());
    const list = entries.filter((v) => v !== '');
    if (list.length === 0) this.fail(`${label} lists nobody`);
    return list;
  }

  /** An ISO date-time parameter (n8n's dateTime field), as the gateway wants it; undefined when empty. */
  dateTime(name: string): string | undefined {
    const value = this.optional(name);
    if (value === undefined) return undefined;
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) this.fail(`"${value}" is not a date and time`);
    return at.toISOString();
  }

  /**
   * The file in the input item's binary property `name`, base64 for the gateway's
   * `attachment.base64`, refused here when it is over the gateway's 10 MiB (the gateway would
   * answer 413 after the upload).
   */
  async binary(propertyName: string): Promise<BinaryAttachment> {
    const meta = this.ctx.helpers.assertBinaryData(this.itemIndex, propertyName);
    const bytes = await this.ctx.helpers.getBinaryDataBuffer(this.itemIndex, propertyName);
    if (bytes.length === 0) this.fail(`The binary property "${propertyName}" is empty`);
    if (bytes.length > MAX_ATTACHMENT_BYTES) {
      this.fail(
        `The file in "${propertyName}" is ${bytes.length} bytes: the gateway takes attachments of at most 10 MiB`,
      );
    }
    return {
      base64: bytes.toString('base64'),
      mimeType: meta.mimeType || undefined,
      fileName: meta.fileName || undefined,
    };
  }
}
