import { loadScript, scriptSource, type RedisScript } from '@mgw/common/redis-scripts';

/** This package's scripts folder: `libs/store/lua`, beside `src/` and `dist/` alike. */
const LUA_DIR = new URL('../lua/', import.meta.url);

/** A script of `libs/store/lua` by its file name without `.lua` (e.g. `policy-admit-2`). */
export const storeScript = <R = unknown>(file: string): RedisScript<R> => loadScript<R>(LUA_DIR, file);

/**
 * A script file's text of `libs/store/lua`, includes inlined, for a script composed at run time
 * (a shebang or BullMQ's job scripts in front): `new RedisScript(name, prelude + source)`.
 */
export const storeScriptSource = (file: string): string => scriptSource(LUA_DIR, file);
