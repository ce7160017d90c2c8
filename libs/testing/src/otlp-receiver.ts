/**
 * An OTLP/HTTP trace receiver for tests (issue 56): what a collector's `otlphttp` receiver takes,
 * on a free port of 127.0.0.1 — `POST /v1/traces`, protobuf (`application/x-protobuf`, the SDK's
 * default) or JSON (`application/json`) — decoded into plain spans the tests assert on. The
 * protobuf schema is the subset of opentelemetry-proto's trace messages a span needs, field numbers
 * as in `opentelemetry/proto/trace/v1/trace.proto` (v1.x), parsed by protobufjs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  fixed32 flags = 16; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12;
  repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const Request = protobuf.parse(PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

/** A span as received, ids in hex, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** The resource's `service.name`. */
  service: string;
  /** The resource's `process.pid`: which process exported it. */
  pid: number;
  /** The instrumentation scope's name (`mgw-sender`, `mgw-queue`…). */
  scope: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /** How it came: `protobuf` or `json`. */
  encoding: 'protobuf' | 'json';
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  url: string;
  spans: ReceivedSpan[];
  /** Every raw request body received (a test searches them for what must never be exported). */
  bodies: Buffer[];
  close(): Promise<void>;
}

/** `decode: false` keeps the bodies only (a bench: nothing spent decoding them). */
export async function startOtlpReceiver({ decode = true }: { decode?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push(body);
      if (!decode) {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        return void res.end();
      }
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces')
          throw new Error(`unexpected ${req.method} ${req.url}`);
        const json = (req.headers['content-type'] ?? '').startsWith('application/json');
        const decoded = json
          ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>)
          : (Request.toObject(Request.decode(body), {
              longs: String,
              bytes: String,
              defaults: true,
            }) as Record<string, unknown>);
        spans.push(...flatten(decoded, json ? 'json' : 'protobuf'));
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : '');
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const pick = (o: Obj, camel: string, snake: string): unknown => o[camel] ?? o[snake];

/** Ids: hex in OTLP/JSON, base64 once protobufjs turned the bytes into a string. */
function hexId(v: unknown, json: boolean): string {
  if (typeof v !== 'string' || v === '') return '';
  return json ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex');
}

function value(v: unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  const o = v as Obj;
  for (const k of ['stringValue', 'string_value', 'boolValue', 'bool_value', 'doubleValue', 'double_value'])
    if (o[k] !== undefined) return o[k];
  const int = pick(o, 'intValue', 'int_value');
  if (int !== undefined) return Number(int);
  const arr = pick(o, 'arrayValue', 'array_value') as Obj | undefined;
  if (arr) return list(arr.values).map(value);
  return undefined;
}

function attributes(v: unknown): Record<string, unknown> {
  return Object.fromEntries(list(v).map((kv) => [String(kv.key), value(kv.value)]));
}

function nanosToMs(v: unknown): number {
  return Number(BigInt(String(v ?? '0')) / 1_000_000n);
}

function flatten(req: Obj, encoding: 'protobuf' | 'json'): ReceivedSpan[] {
  const json = encoding === 'json';
  const out: ReceivedSpan[] = [];
  for (const rs of list(pick(req, 'resourceSpans', 'resource_spans'))) {
    const resource = attributes((rs.resource as Obj | undefined)?.attributes);
    const service = String(resource['service.name'] ?? '');
    const pid = Number(resource['process.pid'] ?? 0);
    for (const ss of list(pick(rs, 'scopeSpans', 'scope_spans'))) {
      const scope = String((ss.scope as Obj | undefined)?.name ?? '');
      for (const s of list(ss.spans)) {
        const status = (s.status as Obj | undefined) ?? {};
        out.push({
          traceId: hexId(pick(s, 'traceId', 'trace_id'), json),
          spanId: hexId(pick(s, 'spanId', 'span_id'), json),
          parentSpanId: hexId(pick(s, 'parentSpanId', 'parent_span_id'), json),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          service,
          pid,
          scope,
          startMs: nanosToMs(pick(s, 'startTimeUnixNano', 'start_time_unix_nano')),
          endMs: nanosToMs(pick(s, 'endTimeUnixNano', 'end_time_unix_nano')),
          attributes: attributes(s.attributes),
          events: list(s.events).map((e) => ({ name: String(e.name), attributes: attributes(e.attributes) })),
          links: list(s.links).map((l) => ({
            traceId: hexId(pick(l, 'traceId', 'trace_id'), json),
            spanId: hexId(pick(l, 'spanId', 'span_id'), json),
          })),
          statusCode: Number(status.code ?? 0),
          statusMessage: String(status.message ?? ''),
          encoding,
        });
      }
    }
  }
  return out;
}
