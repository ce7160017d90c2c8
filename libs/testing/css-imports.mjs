/**
 * Loaded by mocha (`.mocharc.json`, `.mocharc.fast.json`: `--import`) so that a test may import a
 * console module as esbuild bundles it: a screen imports its CSS (`import './pools.css'`), which
 * the bundler turns into the page's stylesheet and Node cannot load. Here such an import is an
 * empty module; nothing else is touched. So the console's pure logic (libs/console/src/**) is
 * tested in the fast lane where it is written, with no browser.
 */
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(
      `export async function resolve(specifier, context, next) {
        if (/\\.css$/.test(specifier)) return { url: 'data:text/javascript,export%20default%20%7B%7D', shortCircuit: true };
        return next(specifier, context);
      }`,
    ),
);
