/**
 * The share of a process's on-CPU time a V8 CPU profile (`.cpuprofile`: what `--cpu-prof` writes
 * and the inspector's `Profiler.stop` returns) puts in tracing code, for `tracing-share.bench.ts`
 * (issue 71): one profile gives the share within one run, where CPU time compared between two
 * runs moves by more than the goals on a shared machine.
 *
 * Each sample is the stack the profiler saw, taken every interval: `samples[i]` is the id of the
 * sampled (innermost) node, the path to the root its callers. A sample lasts until the next one
 * (`timeDeltas[i + 1]`; the last, until `endTime`), as Chrome's DevTools count it. `(idle)` is
 * the event loop waiting: not on CPU. `(program)` (V8 or Node's own native work with no JS frame
 * on the stack) and `(garbage collector)` are on CPU. Both are kept, counts and times: the
 * interval is wall time, and on a loaded machine a sample taken after the thread was descheduled
 * lasts that long too (with 100 µs asked, 150–500 µs was usual here, and some 10 ms and more), so
 * a share of samples is the steadier estimate and the one a binomial error fits; a share of time
 * is its check.
 */

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
  scriptId?: string;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  hitCount?: number;
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * Tracing's own modules, as script urls (`file:///…` or a path; the sender runs built, so `dist`,
 * but `src` is matched too for a process run from sources):
 * - the OpenTelemetry API, SDK, exporters and their context manager (`node_modules/@opentelemetry/`);
 * - bullmq-otel, BullMQ's OpenTelemetry adapter (`node_modules/bullmq-otel/`);
 * - the gateway's: `libs/common/{src,dist}/tracing*` (the samplers, `inSpan`, `recordSpan`,
 *   `sampledUnder`, `startTraceSpan`, the id pool), `libs/store/…/queues/queue-telemetry` (BullMQ's
 *   telemetry for the send queues), `services/sender/…/send/send-spans` (a send's spans), and the
 *   API's and notifier's span modules (`request-span`, `event-spans`; not loaded by a sender).
 * The modules that only call those helpers (the sender's inbound, receipts, device set-up; the
 * notifier's delivery) are not tracing code: their calls into the helpers are.
 */
export const TRACING_URL =
  /\/node_modules\/(?:@opentelemetry|bullmq-otel)\/|\/libs\/common\/(?:src|dist)\/tracing[^/]*\.[jt]s$|\/libs\/store\/(?:src|dist)\/queues\/queue-telemetry\.[jt]s$|\/services\/sender\/(?:src|dist)\/send\/send-spans\.[jt]s$|\/services\/api\/(?:src|dist)\/(?:http\/request-span|features\/events\/event-spans)\.[jt]s$/;

/** A frame of tracing's own code (`TRACING_URL`). */
export function isTracingFrame(frame: CallFrame): boolean {
  return TRACING_URL.test(frame.url);
}

/**
 * A frame of the gateway's own code other than tracing (a script of this repository, not a
 * dependency's, not Node's). Such a frame owns the samples under it that meet no tracing frame
 * first: the work `inSpan(…, fn)` or `context.with(ctx, fn)` runs is `fn`'s, not tracing's.
 */
export function isGatewayFrame(frame: CallFrame): boolean {
  const { url } = frame;
  if (!url || url.startsWith('node:') || isTracingFrame(frame)) return false;
  return !url.includes('/node_modules/') || url.includes('/node_modules/@mgw/');
}

/**
 * Whose a sample is — the frame rule, in one place. From the sampled frame towards the root, the
 * first frame that is tracing's (`isTracingFrame`) or the gateway's (`isGatewayFrame`) decides;
 * the frames passed on the way (a dependency such as protobufjs serialising an export, Node's
 * internals such as `AsyncLocalStorage.run` or `crypto`, V8 builtins with no url) belong to
 * whoever called them. A stack with neither (GC, `(program)`, a dependency's own callback) is not
 * tracing's. So the work of a function run inside a span is not tracing's, and what tracing asks
 * of a dependency is.
 *
 * Returns the index in `stack` (innermost first) of the tracing frame that owns the sample, or -1.
 */
export function tracingOwner(stack: readonly CallFrame[]): number {
  for (let i = 0; i < stack.length; i++) {
    if (isTracingFrame(stack[i]!)) return i;
    if (isGatewayFrame(stack[i]!)) return -1;
  }
  return -1;
}

export interface TracingFrameTime {
  functionName: string;
  /** The script, shortened to what follows `node_modules/` or the repository's root. */
  file: string;
  /** 1-based, as an editor shows it. */
  line: number;
  /** Time of the samples this frame owns (its own and what it calls outside the gateway), µs. */
  us: number;
  samples: number;
}

export interface ProfileShare {
  /** Profile span (startTime → endTime), µs. */
  spanUs: number;
  /** Every sample but `(idle)`: count and time (µs). */
  onCpuSamples: number;
  onCpuUs: number;
  /** Samples `tracingOwner` gives to a tracing frame. */
  tracingSamples: number;
  tracingUs: number;
  /** Samples with a tracing frame anywhere on their stack: also the gateway's work run inside spans. */
  underTracingSamples: number;
  underTracingUs: number;
  gcSamples: number;
  gcUs: number;
  /** Tracing's samples by owning frame, most first. */
  frames: TracingFrameTime[];
  /** Tracing's samples by module (a package under node_modules, or a file of the repository), most first. */
  modules: { module: string; us: number; samples: number }[];
}

/** A script url, shortened: from after its last `node_modules/`, else from `services/` or `libs/`. */
export function shortFile(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  const m = /\/((?:services|libs)\/.*)$/.exec(path);
  return m ? m[1]! : path;
}

/** The module a file belongs to: its package (`@opentelemetry/sdk-trace-base`) or the repo file. */
function moduleOf(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm < 0) return shortFile(url);
  const parts = path.slice(nm + '/node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** What `profile` spends in tracing code (`tracingOwner`), in GC, and on CPU at all. */
export function profileShare(profile: CpuProfile, top = 15): ProfileShare {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each node's verdict once: its stack, innermost first, and the tracing frame owning it.
  const verdict = new Map<number, { owner: ProfileNode | undefined; under: boolean }>();
  const judge = (id: number) => {
    let v = verdict.get(id);
    if (v) return v;
    const nodes: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) nodes.push(byId.get(at)!);
    const stack = nodes.map((n) => n.callFrame);
    const owner = tracingOwner(stack);
    v = { owner: owner >= 0 ? nodes[owner] : undefined, under: stack.some(isTracingFrame) };
    verdict.set(id, v);
    return v;
  };

  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const stamps: number[] = [];
  let t = profile.startTime;
  for (let i = 0; i < samples.length; i++) stamps.push((t += deltas[i] ?? 0));

  const out: ProfileShare = {
    spanUs: profile.endTime - profile.startTime,
    onCpuSamples: 0,
    onCpuUs: 0,
    tracingSamples: 0,
    tracingUs: 0,
    underTracingSamples: 0,
    underTracingUs: 0,
    gcSamples: 0,
    gcUs: 0,
    frames: [],
    modules: [],
  };
  const frames = new Map<ProfileNode['callFrame'], TracingFrameTime>();
  const frameKey = new Map<string, TracingFrameTime>();
  const modules = new Map<string, { module: string; us: number; samples: number }>();
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i]!);
    if (!node) continue;
    const name = node.callFrame.functionName;
    if (name === '(idle)') continue;
    const us = Math.max(0, (i + 1 < samples.length ? stamps[i + 1]! : profile.endTime) - stamps[i]!);
    out.onCpuSamples++;
    out.onCpuUs += us;
    if (name === '(garbage collector)') {
      out.gcSamples++;
      out.gcUs += us;
    }
    const v = judge(node.id);
    if (v.under) {
      out.underTracingSamples++;
      out.underTracingUs += us;
    }
    if (!v.owner) continue;
    out.tracingSamples++;
    out.tracingUs += us;
    const f = v.owner.callFrame;
    let row = frames.get(f);
    if (!row) {
      // Nodes of one function under different callers: one row.
      const key = `${f.functionName}\0${f.url}\0${f.lineNumber}\0${f.columnNumber}`;
      row = frameKey.get(key) ?? {
        functionName: f.functionName || '(anonymous)',
        file: shortFile(f.url),
        line: f.lineNumber + 1,
        us: 0,
        samples: 0,
      };
      frameKey.set(key, row);
      frames.set(f, row);
    }
    row.us += us;
    row.samples++;
    const module = moduleOf(f.url);
    const m = modules.get(module) ?? { module, us: 0, samples: 0 };
    m.us += us;
    m.samples++;
    modules.set(module, m);
  }
  const most = (a: { samples: number; us: number }, b: { samples: number; us: number }) =>
    b.samples - a.samples || b.us - a.us;
  out.frames = [...frameKey.values()].sort(most).slice(0, top);
  out.modules = [...modules.values()].sort(most);
  return out;
}

/** The standard error of a share `p` estimated from `n` samples (binomial): √(p(1−p)/n). */
export function shareError(p: number, n: number): number {
  return n > 0 ? Math.sqrt((p * (1 - p)) / n) : NaN;
}
