import { expect } from 'chai';
import { reportFailedTest } from './failure-report.js';

type Reported = Parameters<typeof reportFailedTest>;

/** A stack of two processes: the API warned twice among its info lines, the sender only informed. */
function stackWith(): NonNullable<Reported[1]> {
  const line = (level: string, message: string) => JSON.stringify({ level, message, service: 'x' });
  const processes = [
    {
      name: 'api',
      output: [line('info', 'up'), line('warn', 'slow'), line('info', 'req'), line('error', 'down')],
    },
    { name: 'sender', output: [line('info', 'claimed')] },
  ];
  return {
    processes: processes as unknown as NonNullable<Reported[1]>['processes'],
    dumpLogs: (n = 40) => processes.map((p) => `--- ${p.name}\n${p.output.slice(-n).join('\n')}`).join('\n'),
  };
}

/** Runs `fn` with console.error captured. */
function capturing(fn: () => void): string[] {
  const printed: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void printed.push(args.join(' '));
  try {
    fn();
  } finally {
    console.error = original;
  }
  return printed;
}

describe('testing: a failed stack test reports the stack’s logs', () => {
  it('When a test failed, then every log line goes to stderr and the warnings and errors of each process are appended to its message and its stack', () => {
    const err = new Error('expected 504 to equal 200');
    const test = { state: 'failed', err } as unknown as Mocha.Test;
    const printed = capturing(() => reportFailedTest(test, stackWith()));
    expect(printed).to.have.length(1);
    expect(printed[0]).to.include('"message":"up"').and.include('"message":"claimed"');
    const lines = err.message.split('\n');
    expect(lines[0]).to.equal('expected 504 to equal 200');
    expect(lines.slice(1, 3)).to.deep.equal(["  the stack's last warnings and errors:", '--- api']);
    expect(lines.slice(3).map((l) => JSON.parse(l).message)).to.deep.equal(['slow', 'down']);
    expect(
      err.stack!.startsWith(`Error: ${err.message}\n`),
      'the stack starts with the new message',
    ).to.equal(true);
  });

  it('When a test passed, or no process warned, then nothing is printed or appended beyond the dump', () => {
    const err = new Error('fine');
    const passed = { state: 'passed', err } as unknown as Mocha.Test;
    expect(capturing(() => reportFailedTest(passed, stackWith()))).to.deep.equal([]);
    expect(capturing(() => reportFailedTest({ state: 'failed' } as Mocha.Test, undefined))).to.deep.equal([]);
    const quiet = stackWith();
    quiet.processes.splice(0, 1);
    const failed = { state: 'failed', err } as unknown as Mocha.Test;
    expect(capturing(() => reportFailedTest(failed, quiet))).to.have.length(1);
    expect(err.message).to.equal('fine');
  });
});
