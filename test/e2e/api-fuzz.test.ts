/**
 * Fuzzed requests against the whole stack (real processes, real Redis, the simulator) with raised
 * rate limits. Counts and prints the status histogram, 5xx, non-JSON bodies, answers over 2 s and
 * the processes alive at the end. FUZZ_REQUESTS (default 2000), FUZZ_SEED (default: random,
 * printed) and FUZZ_CONCURRENCY (default 8) replay or scale a run, e.g. FUZZ_REQUESTS=10000.
 * The requests are split between two kinds of token, half each: device tokens (the contract's
 * paths) and workspace tokens, which name their device in the path (`/devices/{id}/…`,
 * docs/workspaces.md) — now and then a device that is not their workspace's, never answered 2xx.
 *
 * Only well-formed HTTP (fetch): what Node's own parser refuses is tested with the HTTP layer.
 */
import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { Stack } from '@mgw/testing';
import { RequestFuzzer, type FuzzToken } from './fuzz/requests.js';

const COUNT = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
/** 5xx answers that name an outage of a dependency, as documented; anything else is a defect. */
const DEPENDENCY_OUTAGES = new Set<string>([ERRORS.serviceUnavailable, ERRORS.connectionServiceDown]);
/** The kinds of token the FUZZ_REQUESTS are split between (the first gets the odd one). */
const KINDS = ['device tokens', 'workspace tokens'] as const;
const shareOf = (i: number) => Math.floor(COUNT / KINDS.length) + (i < COUNT % KINDS.length ? 1 : 0);
const ADMIN = 'fuzz-admin-token-0123456789abcdef';

interface Result {
  label: string;
  status: number;
  ms: number;
  json: boolean;
  envelope: boolean;
  requestId: boolean;
  error?: string;
  hostile?: string;
  /** The path named a device the token's workspace does not own. */
  elsewhere?: string;
  /** A 400's `details` is a list of `{ path: [...], message }` (the contract's shape). */
  detailsShaped?: boolean;
}

const isDetail = (d: unknown): boolean => {
  const { path, message } = (d ?? {}) as { path?: unknown; message?: unknown };
  return Array.isArray(path) && typeof message === 'string' && message !== '';
};

describe('e2e: fuzzed requests (real services, simulator, raised rate limits)', function () {
  this.timeout(120_000 + COUNT * 60);
  let stack: Stack;

  before(async () => {
    // The Stack raises the per-token limits; the failed-authentication guard (per IP) too here,
    // or the invalid tokens would turn every later answer into a 429.
    // The routes of the hostile requests whose limits the Stack leaves as they are, raised too: a
    // 429 before the body is read would hide the 400 they must get.
    const raised = Object.fromEntries(
      ['GROUPS', 'WEBHOOK', 'ACCOUNT', 'BROADCASTS'].map((name) => [`RATE_LIMIT_${name}`, '100000']),
    );
    stack = await Stack.start({
      env: { AUTH_FAILURE_LIMIT: '100000000', ADMIN_API_TOKEN: ADMIN, ...raised },
    });
  });
  after(() => stack?.stop());

  /**
   * The tokens of a kind, and the devices they may not act on. Workspace tokens: a workspace with
   * two devices, two workspace tokens and a device token of one device (naming it); beside it
   * another workspace's device, an id nobody has and one no device could have.
   */
  const tokensOf = async (kind: (typeof KINDS)[number]): Promise<[FuzzToken[], string[]]> => {
    const tag = SEED % 100_000;
    if (kind === 'device tokens')
      return [
        [
          stack.token,
          await stack.createToken(stack.deviceId),
          await stack.createToken(`fz-${tag}-a`),
          await stack.createToken(`fz-${tag}-b`),
        ],
        [],
      ];
    const workspace = async (id: string) => {
      expect((await stack.adminApi(ADMIN, 'POST', '/workspaces', { id, name: id })).status).to.equal(201);
      const minted = () =>
        stack.adminApi<{ value: string }>(ADMIN, 'POST', `/workspaces/${id}/tokens`, { name: 'fuzz' });
      const owner = (await minted()).body.value;
      const device = async () =>
        (await stack.api<{ data: { deviceId: string } }>('POST', '/devices', undefined, owner)).body.data
          .deviceId;
      return { owner, second: (await minted()).body.value, devices: [await device(), await device()] };
    };
    const [ours, theirs] = [await workspace(`fz${tag}a`), await workspace(`fz${tag}b`)];
    const made = await stack.api<{ data: { value: string } }>(
      'POST',
      '/tokens',
      { name: 'fuzz', deviceId: ours.devices[0] },
      ours.owner,
    );
    return [
      [
        { value: ours.owner, devices: ours.devices },
        { value: ours.second, devices: ours.devices },
        { value: made.body.data.value, devices: [ours.devices[0]!] },
      ],
      [theirs.devices[0]!, `fz-${tag}-nobody`, 'NOT AN ID'],
    ];
  };

  KINDS.forEach((kind, i) =>
    it(`When ${shareOf(i)} random requests hit the API with ${kind}, some with hostile list entries, bodies that are not UTF-8 or bad text (lone surrogates, controls in names), then every answer is JSON with the envelope and a request id, no 5xx but documented outages, every hostile one a 400 with the details, ${kind === 'workspace tokens' ? "none 2xx for a device not the workspace's, " : ''}every process alive`, async () => {
      await fuzz(kind, shareOf(i));
    }),
  );

  async function fuzz(kind: (typeof KINDS)[number], count: number): Promise<void> {
    console.log(
      `      fuzz seed ${SEED} (FUZZ_SEED=${SEED} FUZZ_REQUESTS=${COUNT} replays this run), ${kind}`,
    );
    const [tokens, notOurs] = await tokensOf(kind);
    const fuzzer = new RequestFuzzer(SEED, tokens, [], notOurs);
    const requests = Array.from({ length: count }, () => fuzzer.next());
    const results: Result[] = [];
    const transportErrors: string[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          const r = requests[next++]!;
          const label = `${r.method} ${r.path.slice(0, 120)}`;
          const t0 = Date.now();
          try {
            const res = await fetch(`${stack.apiUrl}${r.path}`, {
              method: r.method,
              headers: r.headers,
              body: r.body,
              redirect: 'manual',
            });
            const text = await res.text();
            const result: Result = {
              label,
              status: res.status,
              ms: Date.now() - t0,
              json: false,
              envelope: false,
              requestId: Boolean(res.headers.get('x-request-id')),
              hostile: r.hostile,
              elsewhere: r.elsewhere,
            };
            if (r.method === 'HEAD') Object.assign(result, { json: true, envelope: text === '' });
            else {
              try {
                const body = JSON.parse(text) as { success?: unknown; error?: unknown; details?: unknown };
                result.json = true;
                result.envelope =
                  typeof body === 'object' &&
                  body !== null &&
                  body.success === res.ok &&
                  (res.ok || typeof body.error === 'string');
                if (typeof body.error === 'string') result.error = body.error;
                result.detailsShaped =
                  Array.isArray(body.details) && body.details.length > 0 && body.details.every(isDetail);
              } catch {
                result.error = text.slice(0, 80);
              }
            }
            results.push(result);
          } catch (err) {
            transportErrors.push(`${label}: ${(err as Error).message}`);
          }
        }
      }),
    );
    const elapsed = Date.now() - started;

    const histogram: Record<number, number> = {};
    for (const r of results) histogram[r.status] = (histogram[r.status] ?? 0) + 1;
    const serverErrors = results.filter((r) => r.status >= 500);
    const unexplained = serverErrors.filter((r) => !DEPENDENCY_OUTAGES.has(r.error ?? ''));
    const nonJson = results.filter((r) => !r.json);
    const badEnvelope = results.filter((r) => r.json && !r.envelope);
    const noRequestId = results.filter((r) => !r.requestId);
    const slow = results.filter((r) => r.ms > 2000);
    // Hostile on purpose (see FuzzRequest.hostile), with a valid token: the body is read and
    // validated before anything else of the route, so the answer is a 400 with its details (or a
    // 413 when a huge entry takes the body over the route's limit).
    const hostile = results.filter((r) => r.hostile);
    const refused = (r: Result) =>
      r.envelope &&
      ((r.status === 400 && r.error === ERRORS.invalidRequest && r.detailsShaped) || r.status === 413);
    const hostileNotRefused = hostile.filter((r) => !refused(r));
    // A device its workspace does not own: never served, whatever the rest of the request.
    const elsewhere = results.filter((r) => r.elsewhere);
    const servedElsewhere = elsewhere.filter((r) => r.status >= 200 && r.status < 300);
    const alive = stack.processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const times = results.map((r) => r.ms).sort((a, b) => a - b);
    const show = (rs: Result[]) =>
      rs.slice(0, 10).map((r) => `        ${r.status} ${r.ms} ms ${r.label} -> ${r.error ?? ''}`);
    console.log(
      [
        `      ${results.length} answers in ${elapsed} ms (${CONCURRENCY} at a time); statuses ${JSON.stringify(histogram)}`,
        `      5xx: ${serverErrors.length} (not a documented outage: ${unexplained.length}); non-JSON: ${nonJson.length}; ` +
          `bad envelope: ${badEnvelope.length}; no request id: ${noRequestId.length}; transport errors: ${transportErrors.length}`,
        `      latency p50 ${times[Math.floor(times.length / 2)]} ms, p99 ${times[Math.floor(times.length * 0.99)]} ms, ` +
          `max ${times[times.length - 1]} ms; over 2 s: ${slow.length}`,
        `      hostile (list entries, not UTF-8, bad text): ${hostile.length}, refused with a 400 and the details (or a 413): ` +
          `${hostile.length - hostileNotRefused.length}`,
        ...(kind === 'workspace tokens'
          ? [
              `      naming a device not the workspace's: ${elsewhere.length}, answered 2xx: ${servedElsewhere.length}`,
            ]
          : []),
        `      processes alive at the end: ${alive.length}/${stack.processes.length} (${stack.processes.map((p) => p.name).join(', ')})`,
        ...show([
          ...serverErrors,
          ...hostileNotRefused,
          ...servedElsewhere,
          ...nonJson,
          ...badEnvelope,
          ...slow,
        ]),
        ...transportErrors.slice(0, 10).map((e) => `        ${e}`),
      ].join('\n'),
    );
    expect(transportErrors, 'requests without an HTTP answer').to.deep.equal([]);
    expect(
      nonJson.map((r) => r.label),
      'non-JSON answers',
    ).to.deep.equal([]);
    expect(
      badEnvelope.map((r) => r.label),
      'answers without the envelope',
    ).to.deep.equal([]);
    expect(
      noRequestId.map((r) => r.label),
      'answers without X-Request-Id',
    ).to.deep.equal([]);
    expect(
      unexplained.map((r) => `${r.status} ${r.label} ${r.error}`),
      '5xx that are not a dependency outage',
    ).to.deep.equal([]);
    expect(hostile.length, 'hostile requests sent').to.be.above(0);
    expect(
      hostileNotRefused.map((r) => `${r.status} ${r.hostile} ${r.label} ${r.error ?? ''}`),
      'hostile requests not refused with a 400 and the error shape',
    ).to.deep.equal([]);
    expect(
      servedElsewhere.map((r) => `${r.status} ${r.elsewhere} ${r.label}`),
      "requests naming a device not the workspace's, answered 2xx",
    ).to.deep.equal([]);
    if (kind === 'workspace tokens')
      expect(elsewhere.length, "devices not the workspace's named").to.be.above(0);
    expect(alive.length, 'processes alive').to.equal(stack.processes.length);
  }
});
