import { expect } from 'chai';
import { fairShare, planHandovers } from '../../src/fleet/fair-share.js';

describe('sender: fair share of the fleet', () => {
  it('When devices and live senders are counted, then the share is the rounded-up quotient, capped by SENDER_MAX_DEVICES', () => {
    expect(fairShare(100, 1, 0)).to.equal(100);
    expect(fairShare(100, 3, 0)).to.equal(34);
    expect(fairShare(100, 2, 40)).to.equal(40);
    expect(fairShare(0, 0, 0)).to.equal(0);
  });

  it('When a sender holds more than its share, then the excess goes to the least loaded senders below the share, each up to what it lacks', () => {
    const held = Array.from({ length: 10 }, (_, i) => `d${i}`);
    const loads = new Map([
      ['me', 10],
      ['b', 2],
      ['c', 4],
    ]);
    const plan = planHandovers('me', held, { loads }, 5);
    // b lacks 3, c lacks 1: four of the five in excess move, the fifth stays (nobody can take it).
    expect(plan.map((p) => p.to)).to.deep.equal(['b', 'b', 'b', 'c']);
    expect(new Set(plan.map((p) => p.deviceId)).size).to.equal(4);
  });

  it('When nobody is below the share, or this sender is within it, then nothing is handed over (no ping-pong)', () => {
    const held = ['a', 'b', 'c', 'd'];
    expect(
      planHandovers(
        'me',
        held,
        {
          loads: new Map([
            ['me', 4],
            ['x', 4],
          ]),
        },
        4,
      ),
    ).to.deep.equal([]);
    expect(
      planHandovers(
        'me',
        held,
        {
          loads: new Map([
            ['me', 4],
            ['x', 3],
          ]),
        },
        3,
      ),
    ).to.have.length(0);
    expect(
      planHandovers(
        'me',
        held,
        {
          loads: new Map([
            ['me', 4],
            ['x', 2],
          ]),
        },
        3,
      ),
    ).to.deep.equal([{ deviceId: 'd', to: 'x' }]);
  });
});
