import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { TOKEN_LIFETIME_MAX_DAYS } from '@mgw/store';
import { call, type JsonResponse, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi, type AdminSessionClient } from '../../../../test/helpers/admin.js';

/**
 * What a tenant can create and for how long, over a real API and Redis (docs/workspaces.md
 * "Quotas"): a token's lifetime has one maximum on every route that mints tokens.
 */
describe('API: bounds — a token lives at most ten years, on every route that mints one', () => {
  let t: TestApi;
  const id = `bd${randomBytes(4).toString('hex')}`;
  let owner = '';
  let console_: AdminSessionClient;

  before(async () => {
    // Many tokens are minted here: the connect limit is not what is tested.
    t = await startAdminApi({ rateLimits: { connect: 100_000 } });
    expect(
      (await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: 'Bounds' } })).status,
    ).to.equal(201);
    const minted = await adminCall(t, `/workspaces/${id}/tokens`, {
      method: 'POST',
      json: { name: 'owner' },
    });
    owner = minted.body.value as string;
    const password = 'a console password of some length';
    const user = `admin-${id}@example.test`;
    const made = await adminCall(t, `/workspaces/${id}/users`, {
      method: 'POST',
      json: { user, password, role: 'admin' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    console_ = await signIn(t, password, user);
  });
  after(async () => t.close());

  /** Every route that mints a token, each given `expiresIn`. */
  const routes: [string, (expiresIn: string) => Promise<JsonResponse>][] = [
    [
      "the workspace's POST /tokens",
      (expiresIn) =>
        call(`${t.api}/tokens`, { method: 'POST', token: owner, json: { name: 'x', expiresIn } }),
    ],
    [
      "the operator's POST /workspaces/{id}/tokens",
      (expiresIn) =>
        adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
    [
      "the operator's POST /tokens",
      (expiresIn) => adminCall(t, '/tokens', { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
    [
      "the console's POST /tokens",
      (expiresIn) => console_.call('/tokens', { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
  ];

  const day = 86_400_000;
  const max = TOKEN_LIFETIME_MAX_DAYS;

  it('When expiresIn is the maximum in any unit, then the token is made and expires then', async () => {
    expect(max).to.equal(3650);
    for (const [route, mint] of routes) {
      for (const given of [`${max}d`, `${max * 24}h`, `${max * 1440}m`, `${max * 86_400}s`]) {
        const before = Date.now();
        const r = await mint(given);
        expect(r.status, `${route} ${given}: ${JSON.stringify(r.body)}`).to.equal(201);
        const token = ((r.body.data as Record<string, unknown> | undefined) ?? r.body).token as {
          expiresAt: string;
        };
        const at = Date.parse(token.expiresAt);
        expect(at, `${route} ${given}`).to.be.within(before + max * day - 1000, Date.now() + max * day);
      }
    }
  });

  it('When expiresIn is past the maximum or past any date, then 400 naming expiresIn, never a 5xx', async () => {
    const over = [
      `${max + 1}d`,
      `${max * 24 + 1}h`,
      `${max * 1440 + 1}m`,
      `${max * 86_400 + 1}s`,
      '9999999999d',
    ];
    const malformed = [
      '99999999999999999999d',
      '1e400d',
      '9007199254740993s',
      '0d',
      '-1d',
      '30x',
      '1.5d',
      ' 30d',
    ];
    for (const [route, mint] of routes) {
      for (const given of [...over, ...malformed]) {
        const r = await mint(given);
        expect(r.status, `${route} ${given}: ${JSON.stringify(r.body)}`).to.equal(400);
        expect(r.body.success).to.equal(false);
        expect(r.body.error).to.equal('Invalid request data');
        const [detail] = r.body.details as { path: string[]; message: string }[];
        expect(detail!.path, `${route} ${given}`).to.deep.equal(['expiresIn']);
        expect(detail!.message, `${route} ${given}`).to.match(
          over.includes(given) ? /must be at most 3650d \(10 years\)/ : /must be a positive number/,
        );
      }
    }
  });
});
