import { processCpuMs } from '@mgw/testing';

/** CPU time (user + system, ms) a process has used so far; Linux only (0 elsewhere). */
export const cpuMs = (pid: number | undefined): number => processCpuMs(pid) || 0;

/** The middle value; of an even count, the mean of the two middle ones (the test kit's, side-by-side.ts). */
export { median } from '@mgw/testing';
