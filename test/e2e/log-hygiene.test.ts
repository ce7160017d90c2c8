/**
 * Invariant 4: no secret in logs. With every service at debug level, a token, an OTP code and a
 * message text go through the whole stack; none of them (nor libsignal's session dumps) may
 * appear in any process's output, nor libsignal's session records (`SessionEntry` dumps with keys).
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Stack, waitFor } from '@mgw/testing';

describe('e2e: logs carry no token, OTP code or message text (all services at debug)', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await Stack.start({ env: { LOG_LEVEL: 'debug' } });
  });
  after(() => stack?.stop());

  it('When a text and an OTP are sent with the token in the query, then no log line contains them', async () => {
    await stack.linkByQr('15550300001', 'Hygiene Account');
    const text = `secret-text-${randomBytes(6).toString('hex')}`;
    const code = String(10_000_000 + Math.floor(Math.random() * 89_999_999));
    const res = await fetch(
      `${stack.apiUrl}/api/messenger/v1/send?token=${encodeURIComponent(stack.token)}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: '15550300002', text }),
      },
    );
    expect(res.status).to.equal(202);
    const otp = await stack.api<{ data: { code: string } }>('POST', '/otp', { phone: '15550300002', code });
    expect(otp.status).to.equal(200);
    expect(otp.body.data.code).to.equal(code);
    await waitFor(async () => (await stack.inbox('15550300002')).length === 2, {
      what: 'both messages arrived',
    });
    await new Promise((r) => setTimeout(r, 500)); // let the last log lines flush

    const output = stack.processes.flatMap((p) => p.output).join('\n');
    expect(output.length).to.be.greaterThan(1000); // debug logs were really written
    for (const secret of [text, code, stack.token, 'SessionEntry']) {
      expect(output.includes(secret), `log contains ${secret.slice(0, 20)}`).to.equal(false);
    }
  });
});
