#!/usr/bin/env node
/**
 * Builds the console: one JS bundle (Preact, bundled by esbuild: nothing is loaded from a CDN),
 * one CSS file and index.html, into this package's `dist/` (BUILT_CONSOLE_DIR, which the API
 * serves at /dashboard) or `--out DIR`. Run by the package's `build` script, so `npm run build`
 * (lerna) and `npm start` include it.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUILT_CONSOLE_DIR } from './index.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Builds the console into `outDir` (default: BUILT_CONSOLE_DIR); returns it. */
export async function buildDashboard(outDir = BUILT_CONSOLE_DIR) {
  return (await buildDashboardFrom(outDir)).outDir;
}

/**
 * Builds into `outDir` from `opts.srcDir` (default: this package's src; the dashboard bench builds
 * an earlier commit's copy, with `opts.nodePaths` naming where its imports are). Answers esbuild's
 * metafile too: which input gave how many bytes of the output.
 */
export async function buildDashboardFrom(outDir, opts = {}) {
  const src = opts.srcDir ?? path.join(HERE, 'src');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(src, 'main.tsx') },
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
    ...(opts.nodePaths ? { nodePaths: opts.nodePaths } : {}),
    metafile: true,
  });
  copyFileSync(path.join(src, 'index.html'), path.join(outDir, 'index.html'));
  return { outDir, metafile: result.metafile };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const out = await buildDashboard(at > 0 ? path.resolve(process.argv[at + 1]) : undefined);
  process.stdout.write(`console built in ${path.relative(process.cwd(), out) || out}\n`);
}
