import { storeScript } from '../lua.js';

/** Takes one message of a cap window when the caps allow it (see `lua/policy-admit-2.lua`). */
export const ADMIT = storeScript<[number, string | number]>('policy-admit-2');
