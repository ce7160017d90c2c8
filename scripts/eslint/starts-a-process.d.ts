/** Types of scripts/eslint/starts-a-process.js, for its test (test/fast/lint/starts-a-process.test.ts). */
export declare const PROCESS_MODULES: string[];
export declare const PURE_TEST_KIT: string[];
export declare const SIGN_NAMES: string[];
/** The signs that the file (its text given) starts a process or opens a connection: empty when none. */
export declare function processSigns(file: string, text: string, repoRoot: string): string[];
export declare function startsAProcess(repoRoot: string): unknown;
