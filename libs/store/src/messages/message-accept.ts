import { RedisScript } from '@mgw/common';
import { jobScriptsLua } from '../queues/bullmq-door.js';
import { storeScriptSource } from '../lua.js';
import type { SendQueue } from '../queues/send-queues.js';

/**
 * The whole accept script: BullMQ's job-adding scripts as functions (`jobScriptsLua`:
 * `bull[plain](KEYS, ARGV)`, their own code), then ours (`lua/message-accept-n.lua`, which includes
 * the message index's). The shebang makes Redis refuse it whole when it is out of memory, before
 * anything is written.
 */
function composeLua(jobScripts: string): string {
  return `#!lua\n${jobScripts}${storeScriptSource('message-accept-n')}`;
}

let script: Promise<RedisScript<number[]>> | undefined;

/**
 * The script that accepts a group of send requests of one device in one call, atomically (see
 * `lua/message-accept-n.lua` for its keys, its packed argument and its reply), composed once with
 * this process's BullMQ version's job scripts.
 */
export function acceptScript(queue: SendQueue): Promise<RedisScript<number[]>> {
  if (!script) {
    script = jobScriptsLua(queue).then(
      (lua) => new RedisScript<number[]>('lua:store/message-accept-n', composeLua(lua)),
    );
    // A failure (Redis away at the first use) is not remembered.
    script.catch(() => (script = undefined));
  }
  return script;
}
