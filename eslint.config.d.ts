/** Types of what eslint.config.js exports besides the config, for the tests that read its maps. */
export declare const MAY_IMPORT: Record<string, string[]>;
export declare const BAILEYS_ALLOWED: string[];
declare const config: unknown[];
export default config;
