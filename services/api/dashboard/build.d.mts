/** Builds the dashboard into `outDir` (default: the api package's dist/dashboard); returns it. */
export function buildDashboard(outDir?: string): Promise<string>;
