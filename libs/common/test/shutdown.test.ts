import { expect } from 'chai';
import { runScript } from './child-script.js';

/**
 * Runs a small service in a child process: it installs the shutdown with one step, then does
 * `act` once it is up. Returns its exit code and the JSON lines it wrote.
 */
async function runService(act: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const script = `
    import { createLogger, installShutdown } from '@mgw/common';
    const logger = createLogger({ service: 'shutdown-test' });
    installShutdown(logger, [{ name: 'release', run: () => logger.info('step ran', { step: 'release' }) }], 5000);
    setInterval(() => undefined, 1000);
    setTimeout(() => { ${act} }, 20);
  `;
  const { code, lines, stderr } = await runScript(script);
  if (lines.length === 0) throw new Error(`the child wrote no JSON line; stderr: ${stderr}`);
  return { code, lines };
}

describe('common: shutdown', function () {
  this.timeout(30_000);

  it('When a rejection escapes every handler, then it is logged as a JSON line, the shutdown steps run, and the process exits 1', async () => {
    const { code, lines } = await runService(`Promise.reject(new Error('boom in a piece'));`);
    expect(code).to.equal(1);
    const crash = lines.find((l) => l.message === 'unhandled rejection');
    expect(crash, JSON.stringify(lines)).to.include({ level: 'error', service: 'shutdown-test' });
    expect((crash!.err as { message: string }).message).to.equal('boom in a piece');
    const messages = lines.map((l) => l.message);
    expect(messages).to.include.members(['step ran', 'shutdown complete']);
    expect(messages.indexOf('unhandled rejection')).to.be.lessThan(messages.indexOf('step ran'));
  });

  it('When an exception escapes every handler, then it is logged as a JSON line, the shutdown steps run, and the process exits 1', async () => {
    const { code, lines } = await runService(`throw new Error('boom in a callback');`);
    expect(code).to.equal(1);
    const crash = lines.find((l) => l.message === 'uncaught exception');
    expect(crash, JSON.stringify(lines)).to.include({ level: 'error' });
    expect((crash!.err as { message: string }).message).to.equal('boom in a callback');
    expect(lines.map((l) => l.message)).to.include.members(['step ran', 'shutdown complete']);
  });

  it('When the process gets SIGTERM, then the steps run and it exits 0', async () => {
    const { code, lines } = await runService(`process.kill(process.pid, 'SIGTERM');`);
    expect(code).to.equal(0);
    expect(lines.map((l) => l.message)).to.include.members([
      'shutting down',
      'step ran',
      'shutdown complete',
    ]);
    expect(lines.find((l) => l.level === 'error')).to.equal(undefined);
  });
});
