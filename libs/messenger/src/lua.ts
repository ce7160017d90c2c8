import { loadScript, type RedisScript } from '@mgw/common/redis-scripts';

/** This package's scripts folder: `libs/messenger/lua`, beside `src/` and `dist/` alike. */
const LUA_DIR = new URL('../lua/', import.meta.url);

/** A script of `libs/messenger/lua` by its file name without `.lua` (e.g. `auth-fenced-write-n`). */
export const messengerScript = <R = unknown>(file: string): RedisScript<R> => loadScript<R>(LUA_DIR, file);
