import { expect } from 'chai';
import { CustomerWindows, WINDOW_MS } from './window.js';

describe('cloud-sim: the customer service window', () => {
  it('When the user never wrote, then no window is open', () => {
    const windows = new CustomerWindows();
    expect(windows.isOpen('1', '155', 1_000)).to.equal(false);
    expect(windows.expiresAt('1', '155')).to.equal(undefined);
  });

  it('When the user wrote, then the window is open for 24 hours and closes at exactly 24 hours', () => {
    const windows = new CustomerWindows();
    windows.inbound('1', '155', 1_000);
    expect(windows.isOpen('1', '155', 1_000 + WINDOW_MS - 1)).to.equal(true);
    expect(windows.isOpen('1', '155', 1_000 + WINDOW_MS)).to.equal(false);
    expect(windows.expiresAt('1', '155')).to.equal(1_000 + WINDOW_MS);
  });

  it('When the user writes again, then the window restarts; an older message does not shorten it', () => {
    const windows = new CustomerWindows();
    windows.inbound('1', '155', 1_000);
    windows.inbound('1', '155', 5_000);
    windows.inbound('1', '155', 2_000);
    expect(windows.expiresAt('1', '155')).to.equal(5_000 + WINDOW_MS);
  });

  it('When the user wrote to one business number, then another number has no window with them', () => {
    const windows = new CustomerWindows();
    windows.inbound('1', '155', 1_000);
    expect(windows.isOpen('2', '155', 1_001)).to.equal(false);
    expect(windows.isOpen('1', '156', 1_001)).to.equal(false);
  });
});
