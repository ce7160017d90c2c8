import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '@mgw/common';
import { routeLibsignalConsole } from '../../src/index.js';

describe('messenger: libsignal console lines', () => {
  it('When libsignal dumps a closed session, then only a bare debug line reaches the log, never the keys', async () => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d: Buffer) => (out += d.toString()));
    routeLibsignalConsole(createLogger({ service: 'test', level: 'debug', stream }));

    console.info('Closing session:', { rootKey: Buffer.from('very-secret-root-key') });
    console.warn('Closing open session in favor of incoming prekey bundle');
    await new Promise((r) => setImmediate(r));

    expect(out).not.to.include('very-secret');
    const events = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; message: string; event: string });
    expect(events.map((e) => [e.level, e.message, e.event])).to.deep.equal([
      ['debug', 'libsignal', 'Closing session'],
      ['debug', 'libsignal', 'Closing open session in favor of incoming prekey bundle'],
    ]);
  });
});
