import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { buildPreviousVersion } from '../src/index.js';

describe('buildPreviousVersion: an earlier release from the repository history, for the upgrade test', () => {
  it('When the commit is not in the checkout’s history (a shallow clone), then it fails saying to fetch the full history, and builds nothing', async () => {
    const missing = '0000000000000000000000000000000000000bad';
    const err = await buildPreviousVersion(missing).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.include(`commit ${missing} (the upgrade base) is not in this checkout's history`);
    expect(err?.message).to.include('git fetch --unshallow');
    expect(
      existsSync(path.join(os.tmpdir(), `mgw-previous-${missing}-${process.platform}-${process.arch}`)),
    ).to.equal(false);
  });
});
