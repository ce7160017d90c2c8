import { expect } from 'chai';
import { request } from 'node:http';
import { randomInt } from 'node:crypto';
import type { TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, ADMIN_PASSWORD, startAdminApi } from '../../../../test/helpers/admin.js';
import { loadApiConfig } from '../../../config.js';

const LIMIT = 3;

/** One request from a chosen loopback address (the peer the API sees), with an X-Forwarded-For. */
function from(
  t: TestApi,
  peer: string,
  xff: string | undefined,
  opts: { method: string; path: string; json?: unknown; token?: string },
): Promise<{ status: number; remaining: string | undefined }> {
  const body = opts.json === undefined ? undefined : Buffer.from(JSON.stringify(opts.json));
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: peer,
        method: opts.method,
        path: opts.path,
        agent: false,
        headers: {
          ...(xff === undefined ? {} : { 'x-forwarded-for': xff }),
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            remaining: res.headers['x-ratelimit-remaining'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The two counters keyed by the client's address: admin sign-ins (and admin tokens), and wrong API tokens. */
const GUARDS = {
  'admin sign-in': (t: TestApi, peer: string, xff?: string, right = false) =>
    from(t, peer, xff, {
      method: 'POST',
      path: '/api/admin/v1/session',
      json: { password: right ? ADMIN_PASSWORD : 'not the admin password' },
    }),
  'API token': (t: TestApi, peer: string, xff?: string, right = false) =>
    from(t, peer, xff, {
      method: 'GET',
      path: '/api/admin/v1/session',
      token: right ? ADMIN_API_TOKEN : 'not-a-token-of-this-install-0123456789',
    }),
  'public API token': (t: TestApi, peer: string, xff?: string) =>
    from(t, peer, xff, {
      method: 'GET',
      path: '/api/messenger/v1/status',
      token: 'not-a-token-of-this-install-0123456789',
    }),
};

/**
 * An address of `prefix`'s /24 that no earlier client of this file had: the counters live as long as
 * the file's Redis, so an attacker drawn at random could meet the full count of an earlier case's
 * attacker (1 in 254 per draw: a 429 on its first try, seen once in a .ci/run).
 */
const drawn = new Map<string, number>();
const ip = (prefix: string) => {
  const next = (drawn.get(prefix) ?? randomInt(1, 100)) + 1;
  drawn.set(prefix, next);
  return `${prefix}.${next}`;
};
/** A loopback address of its own per client, so no other test's 127.0.0.1 count is shared. */
const loopback = () => `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
const THE_PROXY = '127.0.0.1';

/**
 * The per-address counters behind `TRUST_PROXY` (docs/security.md "Tenants: the ways a workspace's
 * data could leave"): the address a failure counts against is express's `req.ip`, which believes
 * `X-Forwarded-For` only as far as `TRUST_PROXY` says. Each case sends, from one loopback address,
 * failures whose header a client wrote: rotating the value must not earn a fresh count, and naming
 * another client's address must not count against that client. `127.0.0.1` plays the proxy (it
 * appends the address it saw, as nginx and the ingress controllers do); any other 127.x address is
 * a client that reached the API without it.
 */
describe('API: the failure counters behind TRUST_PROXY — a forged X-Forwarded-For neither resets nor shifts a count', () => {
  const apis: TestApi[] = [];
  const start = async (trustProxy: ApiTrust) => {
    const t = await startAdminApi({
      trustProxy,
      authFailureLimit: LIMIT,
      admin: {
        password: ADMIN_PASSWORD,
        apiToken: ADMIN_API_TOKEN,
        sessionTtlSeconds: 3600,
        signInLimit: LIMIT,
        signInWindowMs: 60_000,
      },
    });
    apis.push(t);
    return t;
  };
  after(async () => {
    await Promise.all(apis.map((t) => t.close()));
  });
  type ApiTrust = TestApi['config']['trustProxy'];

  interface Clients {
    attackerPeer: string;
    /** The X-Forwarded-For the API gets when the attacker wrote `forged` (through the proxy: with its address appended). */
    attackerHeader: (forged: string) => string;
    victimPeer: string;
    victimHeader?: string;
    /** The address the victim's failures count against. */
    victimAddress: string;
  }
  /**
   * For each guard (new clients from `clients()` each time: the admin sign-in and the admin token
   * share one count), the attacker fails LIMIT + 1 times with a new forged value each time, then
   * LIMIT times naming the victim's address; then the victim fails once and, but on the public
   * API, signs in with the right credentials. Each answer's status, and the budget the victim's
   * failure left (`X-RateLimit-Remaining` of the public API's guard).
   */
  async function attack(t: TestApi, clients: () => Clients) {
    const seen: Record<string, { rotating: number[]; victim: (number | string | undefined)[] }> = {};
    for (const [name, fail] of Object.entries(GUARDS)) {
      const how = clients();
      const rotating = [];
      for (let i = 0; i <= LIMIT; i++)
        rotating.push((await fail(t, how.attackerPeer, how.attackerHeader(ip('192.0.2')))).status);
      for (let i = 0; i < LIMIT; i++) await fail(t, how.attackerPeer, how.attackerHeader(how.victimAddress));
      const failed = await fail(t, how.victimPeer, how.victimHeader);
      const victim: (number | string | undefined)[] = [failed.status];
      if (name === 'public API token') victim.push(failed.remaining);
      else victim.push((await fail(t, how.victimPeer, how.victimHeader, true)).status);
      seen[name] = { rotating, victim };
    }
    return seen;
  }
  const rotatingHeld = [...Array<number>(LIMIT).fill(401), 429];
  const held = (seen: Awaited<ReturnType<typeof attack>>) => {
    for (const [name, answers] of Object.entries(seen))
      expect(answers, name).to.deep.equal({
        rotating: rotatingHeld,
        victim: name === 'public API token' ? [401, String(LIMIT - 1)] : [401, 200],
      });
  };
  const throughTheProxy = (): Clients => {
    const [attacker, victim] = [ip('203.0.113'), ip('198.51.100')];
    return {
      attackerPeer: THE_PROXY,
      attackerHeader: (forged) => `${forged}, ${attacker}`,
      victimPeer: THE_PROXY,
      victimHeader: victim,
      victimAddress: victim,
    };
  };
  const directly = (): Clients => {
    const victimPeer = loopback();
    return {
      attackerPeer: loopback(),
      attackerHeader: (forged) => forged,
      victimPeer,
      victimAddress: victimPeer,
    };
  };

  it('When TRUST_PROXY is false or 0 and a client writes X-Forwarded-For, then the header is ignored: its connection counts', async () => {
    for (const trust of [false, 0] as const) held(await attack(await start(trust), directly));
  });

  it('When TRUST_PROXY counts one hop and the request came through the proxy, then the address the proxy appended counts, whatever the client wrote before it', async () => {
    held(await attack(await start(1), throughTheProxy));
  });

  it("When TRUST_PROXY names the proxy's address, then through it the appended address counts, and a client that reaches the API directly counts as its connection", async () => {
    const t = await start(THE_PROXY);
    held(await attack(t, throughTheProxy));
    held(await attack(t, directly));
  });

  it('When TRUST_PROXY counts hops and a client reaches the API without the proxy, or counts more hops than there are proxies, then the header the client wrote is believed: why only the proxy may reach the API and the count must be exact', async () => {
    const forged = { rotating: [401, 401, 401, 401], victim: [429, 429] };
    const seen = await attack(await start(1), () => {
      const victim = ip('198.51.100');
      return {
        attackerPeer: loopback(),
        attackerHeader: (value) => value,
        victimPeer: THE_PROXY,
        victimHeader: victim,
        victimAddress: victim,
      };
    });
    expect(seen['admin sign-in']).to.deep.equal(forged);
    expect(seen['API token']).to.deep.equal(forged);
    const tooMany = await attack(await start(2), () => {
      const victim = ip('198.51.100');
      return {
        attackerPeer: THE_PROXY,
        attackerHeader: (value) => `${value}, ${ip('203.0.113')}`,
        victimPeer: THE_PROXY,
        victimHeader: `${victim}, ${ip('203.0.113')}`,
        victimAddress: victim,
      };
    });
    expect(tooMany['admin sign-in']).to.deep.equal(forged);
  });

  it('When TRUST_PROXY is true (every hop trusted), then the API does not start: the leftmost address, which any client writes, would count', async () => {
    // What it would do behind a proxy that appends: a client resets its count and blocks another's.
    const seen = await attack(await start(true), throughTheProxy);
    expect(seen['admin sign-in']).to.deep.equal({ rotating: [401, 401, 401, 401], victim: [429, 429] });
    const load = (value: string) => () =>
      loadApiConfig({ ...process.env, NODE_ENV: 'test', TRUST_PROXY: value });
    for (const value of ['true', 'TRUE']) expect(load(value), value).to.throw(/TRUST_PROXY.*every/);
    expect(load('1')().trustProxy).to.equal(1);
    expect(load('false')().trustProxy).to.equal(false);
    expect(load('10.0.0.5, 10.0.0.6')().trustProxy).to.equal('10.0.0.5, 10.0.0.6');
  });
});
