/**
 * The Node options a service process starts with, beyond its entry point: `npm start`
 * (scripts/start.mjs) and the test stack (src/stack.ts) both use this; docker-compose.yml and
 * k8s/base/*.yaml set the same through NODE_OPTIONS (test/deploy checks that they do).
 *
 * sender — `--max-semi-space-size=16`, Node 20's young generation. Node 24 grows its semi-spaces
 * up to 64 MiB under a busy sender's allocation rate, and keeps them: 100 busy devices held
 * 551 MiB of RSS instead of 396 MiB (docs/benchmarks.md, "Fleet"). V8 reads it only at start-up
 * (`v8.setFlagsFromString` comes too late), so it is a command-line option, unlike the sender's
 * heap growth factor (SENDER_HEAP_GROWING_PERCENT).
 */
export const SERVICE_NODE_ARGS = Object.freeze({
  sender: Object.freeze(['--max-semi-space-size=16']),
});

/** The Node options of `service` (none for most). */
export function nodeArgsOf(service) {
  return SERVICE_NODE_ARGS[service] ?? [];
}
