#!/usr/bin/env node
/**
 * Builds the dashboard: one JS bundle (Preact, bundled by esbuild: nothing is loaded from a CDN),
 * one CSS file and index.html, into `dist/dashboard` of the api package (or `--out DIR`).
 * Run by the package's `build` script, so `npm run build` (lerna) and `npm start` include it.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export async function buildDashboard(outDir = path.join(HERE, '../dist/dashboard')) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  await build({
    entryPoints: { app: path.join(HERE, 'src/main.tsx') },
    outdir: path.join(outDir, 'assets'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'css' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(path.join(HERE, 'src/index.html'), path.join(outDir, 'index.html'));
  return outDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const out = await buildDashboard(at > 0 ? path.resolve(process.argv[at + 1]) : undefined);
  process.stdout.write(`dashboard built in ${path.relative(process.cwd(), out) || out}\n`);
}
