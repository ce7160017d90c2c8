import { Packr } from 'msgpackr';
import type { SendJobData } from '@mgw/contracts';
import type { SendQueue } from '@mgw/store';

/**
 * BullMQ packs a job's arguments and options with msgpackr, so: its options, exactly
 * (`new Packr({ useRecords: false, encodeUndefinedAsNil: true })` in its Redis backend).
 */
const packr = new Packr({ useRecords: false, encodeUndefinedAsNil: true });

/** The options of a send job, as the gateway gives them (see `JobWriter.jobOptions`). */
export interface SendJobOptions {
  jobId: string;
  priority: number;
  delay?: number;
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: { age: number };
  removeOnFail: { age: number };
}

/** The Redis script call that adds one job: the script's versioned name and its keys and arguments. */
export interface JobCommand {
  script: string;
  args: (string | Buffer)[];
  /** The script's plain name (`addPrioritizedJob`…). */
  plain: string;
  /** How many of `args` are keys (the same for every job of the queue and script). */
  keyCount: number;
}

/**
 * What `new Job(queue, name, data, opts, jobId).addJob(tx)` queues on `tx`, built without the
 * `Job` object (its constructor, `asJSON` and the promise chain cost ~40 µs a job): the same
 * script (`addStandardJob`, `addPrioritizedJob` or `addDelayedJob` of this BullMQ version), the same
 * keys and the same packed arguments, so a BullMQ worker reads the job as if BullMQ had added it.
 * Only what send jobs use is covered (no parent, repeat or deduplication); a test holds it equal
 * to `Job.addJob`'s output for every shape of send job.
 */
export class BullJobs {
  private readonly keys: Record<string, string>;

  constructor(
    queue: SendQueue,
    /** The job-adding scripts' versioned names (`addStandardJob:<version>`…), by their plain name. */
    private readonly scripts: Readonly<Record<string, string>>,
  ) {
    this.keys = queue.keys;
  }

  command(name: string, data: SendJobData, opts: SendJobOptions, timestamp = Date.now()): JobCommand {
    const k = this.keys;
    const delayed = opts.delay !== undefined && opts.delay > 0;
    // The options as `new Job` keeps them: `attempts` first (its default), then in the order given
    // (`JobWriter.jobOptions`), no undefined field.
    const encodedOpts = packr.pack({
      attempts: opts.attempts,
      jobId: opts.jobId,
      priority: opts.priority,
      ...(opts.delay !== undefined ? { delay: opts.delay } : {}),
      backoff: opts.backoff,
      removeOnComplete: opts.removeOnComplete,
      removeOnFail: opts.removeOnFail,
    });
    const args = packr.pack([
      k['']!,
      opts.jobId,
      name,
      timestamp,
      null,
      null,
      undefined,
      undefined,
      null,
      null,
    ]);
    const json = JSON.stringify(data);
    let script: string;
    let keys: string[];
    if (delayed) {
      script = 'addDelayedJob';
      keys = [k.marker!, k.meta!, k.id!, k.delayed!, k.completed!, k.events!];
    } else if (opts.priority) {
      script = 'addPrioritizedJob';
      keys = [
        k.marker!,
        k.meta!,
        k.id!,
        k.prioritized!,
        k.delayed!,
        k.completed!,
        k.active!,
        k.events!,
        k.pc!,
      ];
    } else {
      script = 'addStandardJob';
      keys = [k.wait!, k.paused!, k.meta!, k.id!, k.completed!, k.delayed!, k.active!, k.events!, k.marker!];
    }
    const versioned = this.scripts[script];
    if (!versioned) throw new Error(`BullMQ's ${script} script was not found`);
    return {
      script: versioned,
      args: [...keys, args, json, encodedOpts],
      plain: script,
      keyCount: keys.length,
    };
  }
}
