/**
 * A worker thread's entry when the process runs from its TypeScript sources (tsx: development,
 * tests, benchmarks): registers tsx's loader in this thread, then imports the `.ts` the thread was
 * started for (its last argument). The thread inherits the parent's `--import tsx`, but tsx only
 * hooks a worker thread itself on Node ≥ 22.22.3 and ≥ 24.11.1 (older Nodes cannot tell it from
 * their own loader-hooks thread): Node 20 and earlier 22.x/24.x would refuse the `.ts`
 * (ERR_UNKNOWN_FILE_EXTENSION). Where tsx did hook the thread, this second registration is
 * redundant and harmless. The build never comes here: its threads load their `.js` directly.
 */
import { register } from 'tsx/esm/api';

register();
await import(process.argv[process.argv.length - 1]);
