import { processCpuMs } from '@mgw/testing';

/** CPU time (user + system, ms) a process has used so far; Linux only (0 elsewhere). */
export const cpuMs = (pid: number | undefined): number => processCpuMs(pid) || 0;

/** The middle value; of an even count, the mean of the two middle ones. */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
