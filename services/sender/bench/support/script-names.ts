/**
 * The names of the Lua scripts the services run, by their SHA-1 (what EVALSHA sends, and what
 * MONITOR shows): every `<pkg>/lua/<name>.lua` of libs/ and services/ as `loadScript` composes it
 * (its includes inlined), alone and behind the `#!lua` shebangs some callers put in front
 * (content-store.ts), and BullMQ's own scripts as ioredis defines them (their `content`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { scriptSource } from '@mgw/common/redis-scripts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SHEBANGS = ['', '#!lua\n', '#!lua flags=allow-oom\n', '#!lua flags=no-writes\n'];

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * SHA-1 → a script's name (`policy-admit-2`, `bullmq:moveToActive-11`): this checkout's scripts,
 * and those of the trees of `roots` (another commit's build the services run from).
 */
export function scriptNames(roots: string[] = []): Map<string, string> {
  const names = new Map<string, string>();
  for (const root of [ROOT, ...roots]) addScripts(names, root);
  return names;
}

function addScripts(names: Map<string, string>, root: string): void {
  for (const group of ['libs', 'services'])
    for (const pkg of readdirSync(path.join(root, group))) {
      const dir = path.join(root, group, pkg, 'lua');
      if (!existsSync(dir)) continue;
      const url = pathToFileURL(`${dir}/`);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.lua'))) {
        const name = file.slice(0, -'.lua'.length);
        const source = scriptSource(url, name);
        for (const shebang of SHEBANGS) names.set(sha1(shebang + source), name);
      }
    }
  // BullMQ's scripts, from its CommonJS build (its ESM index imports without extensions).
  const require = createRequire(path.join(root, 'package.json'));
  const scriptsDir = path.join(path.dirname(require.resolve('bullmq')), 'scripts');
  const bull = require(path.join(scriptsDir, 'index.js')) as Record<
    string,
    { name?: string; content?: string; keys?: number }
  >;
  for (const script of Object.values(bull))
    if (script.content && script.name)
      names.set(sha1(script.content), `bullmq:${script.name}-${script.keys}`);
}
