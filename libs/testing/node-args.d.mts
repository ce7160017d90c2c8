/** The Node options a service process starts with, beyond its entry point (see node-args.mjs). */
export const SERVICE_NODE_ARGS: Readonly<Record<string, readonly string[]>>;
/** The Node options of `service` (none for most). */
export function nodeArgsOf(service: string): readonly string[];
