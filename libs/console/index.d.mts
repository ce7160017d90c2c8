/** Where `npm run build` puts the built console (index.html and assets/). */
export declare const BUILT_CONSOLE_DIR: string;
