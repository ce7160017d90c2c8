import { expect } from 'chai';
import {
  isTracingFrame,
  profileShare,
  shareError,
  tracingOwner,
  type CallFrame,
  type CpuProfile,
} from '../../bench/support/cpu-profile-share.js';

const frame = (functionName: string, url = ''): CallFrame => ({
  functionName,
  url,
  lineNumber: 9,
  columnNumber: 0,
});
const ROOT = 'file:///work/main';
const OTEL = `${ROOT}/node_modules/@opentelemetry/sdk-trace-base/build/src/Tracer.js`;
const TRACING = `${ROOT}/libs/common/dist/tracing.js`;

/**
 * The sender's main calls `inSpan` (tracing), which starts a span (OpenTelemetry, whose ids come
 * from Node's crypto) and runs the send (the gateway's, under a tracing frame); main also encodes
 * with a dependency; plus idle, GC and `(program)` samples.
 */
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 5] },
    { id: 2, callFrame: frame('(program)') },
    { id: 3, callFrame: frame('(idle)') },
    { id: 4, callFrame: frame('(garbage collector)') },
    { id: 5, callFrame: frame('main', `${ROOT}/services/sender/dist/main.js`), children: [6, 9] },
    { id: 6, callFrame: frame('inSpan', TRACING), children: [7, 8] },
    { id: 7, callFrame: frame('startSpan', OTEL), children: [10] },
    { id: 8, callFrame: frame('sendMessage', `${ROOT}/services/sender/dist/send/sender.js`) },
    { id: 9, callFrame: frame('encode', `${ROOT}/node_modules/protobufjs/src/writer.js`) },
    { id: 10, callFrame: frame('randomFillSync', 'node:internal/crypto/random') },
  ],
  startTime: 1000,
  // Stamps 1000, 1100, 1300, 1400, 1700, 1800, 1850, 2000, 2100; each sample lasts to the next.
  samples: [3, 7, 10, 8, 4, 6, 9, 2, 3],
  timeDeltas: [0, 100, 200, 100, 300, 100, 50, 150, 100],
  endTime: 2200,
};

describe('CPU profile: the share of tracing code', () => {
  it('When a profile is read, then idle is off CPU and each sample goes to the tracing frame nearest above it, if no gateway frame comes first', () => {
    const s = profileShare(PROFILE);
    // On CPU: startSpan 200, randomFillSync 100, sendMessage 300, GC 100, inSpan 50, encode 150, (program) 100.
    expect(s).to.include({ spanUs: 1200, onCpuSamples: 7, onCpuUs: 1000 });
    // startSpan's own, Node's crypto under it, inSpan's own; not the send run inside the span.
    expect(s).to.include({ tracingSamples: 3, tracingUs: 350 });
    expect(s).to.include({ underTracingSamples: 4, underTracingUs: 650 });
    expect(s).to.include({ gcSamples: 1, gcUs: 100 });
    expect(s.frames).to.deep.equal([
      {
        functionName: 'startSpan',
        file: '@opentelemetry/sdk-trace-base/build/src/Tracer.js',
        line: 10,
        us: 300,
        samples: 2,
      },
      { functionName: 'inSpan', file: 'libs/common/dist/tracing.js', line: 10, us: 50, samples: 1 },
    ]);
    expect(s.modules).to.deep.equal([
      { module: '@opentelemetry/sdk-trace-base', us: 300, samples: 2 },
      { module: 'libs/common/dist/tracing.js', us: 50, samples: 1 },
    ]);
  });

  it('When a stack is judged, then tracing modules (built or from sources) own it, and a dependency or Node passes it on', () => {
    for (const url of [
      OTEL,
      `${ROOT}/node_modules/bullmq-otel/dist/index.js`,
      `${ROOT}/libs/common/src/tracing.ts`,
      `${ROOT}/libs/store/dist/queues/queue-telemetry.js`,
      `${ROOT}/services/sender/dist/send/send-spans.js`,
    ])
      expect(isTracingFrame(frame('f', url)), url).to.equal(true);
    for (const url of [
      `${ROOT}/services/sender/dist/inbound/receipts.js`,
      `${ROOT}/node_modules/bullmq/dist/esm/index.js`,
      'node:internal/async_local_storage/async_context_frame',
    ])
      expect(isTracingFrame(frame('f', url)), url).to.equal(false);
    const protobuf = frame('encode', `${ROOT}/node_modules/protobufjs/src/writer.js`);
    const exporter = frame(
      'send',
      `${ROOT}/node_modules/@opentelemetry/otlp-exporter-base/build/src/index.js`,
    );
    const worker = frame('processJob', `${ROOT}/node_modules/bullmq/dist/esm/classes/worker.js`);
    const gateway = frame('send', `${ROOT}/services/sender/dist/send/sender.js`);
    // An export's serialisation is tracing's; the gateway's code under a span is not.
    expect(tracingOwner([protobuf, frame('write', 'node:net'), exporter, worker])).to.equal(2);
    expect(tracingOwner([protobuf, gateway, frame('inSpan', TRACING)])).to.equal(-1);
    expect(tracingOwner([frame('(garbage collector)')])).to.equal(-1);
  });

  it('When the error of a share is asked, then it is the binomial one over the samples', () => {
    expect(shareError(0.35, 7)).to.equal(Math.sqrt((0.35 * 0.65) / 7));
    expect(shareError(0, 100)).to.equal(0);
    expect(Number.isNaN(shareError(0.5, 0))).to.equal(true);
  });
});
