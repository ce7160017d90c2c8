import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsFiles } from '../../support/source-files.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Text a client gives is valid Unicode wherever it is stored (issue 52): every schema of what a
 * request carries takes `Joi` from `@mgw/contracts` (libs/contracts/src/text.ts: every string
 * refuses a lone surrogate, names and file names have their rules), never plain `joi`. Plain joi
 * stays for what only the operator gives: the services' environment (config files).
 */
const PLAIN_JOI = /^import\s+(?!type\b)[^;]*\bfrom\s+'joi';/m;
const MAY_USE_PLAIN_JOI = [/\/config\.ts$/, /-config\.ts$/, /^libs\/contracts\/src\/text\.ts$/];

describe('lint: request schemas take the text-checking Joi of @mgw/contracts', () => {
  it('When the sources of libs and services are read, then only config files (and text.ts itself) import plain joi', () => {
    const sources = ['libs', 'services']
      .flatMap((d) => tsFiles(join(ROOT, d)))
      .map((f) => relative(ROOT, f))
      .filter((f) => /\/src\//.test(f));
    expect(sources.length).to.be.greaterThan(100);
    const offenders = sources
      .filter((f) => !MAY_USE_PLAIN_JOI.some((re) => re.test(f)))
      .filter((f) => PLAIN_JOI.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).to.deep.equal([]);
  });
});
