import { readFileSync } from 'node:fs';

/**
 * CPU time (user + system, ms) a process has used so far, from `/proc/<pid>/stat` (Linux; NaN
 * elsewhere or once the process is gone). The fields are counted after the command name's `)`,
 * which may itself hold spaces; the clock tick is Linux's 100 Hz.
 */
export function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
