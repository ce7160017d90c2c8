import { expect } from 'chai';
import { MESSAGE_ID_PATTERN, newMessageId, seededMessageId } from '../../src/index.js';

describe('contracts: message ids', () => {
  it("When an idempotent request's ids are made from its key's seed, then they are UUIDs like any other, the same for the same seed and place, and different otherwise", () => {
    const seed = 'c2VlZC1vZi1hLWtleQ';
    const ids = Array.from({ length: 200 }, (_, i) => seededMessageId(seed, i));
    for (const id of [...ids, seededMessageId(seed, 'batch'), newMessageId()]) {
      expect(id).to.match(MESSAGE_ID_PATTERN);
      expect(id[14], 'version 4').to.equal('4');
      expect('89ab', 'RFC 4122 variant').to.include(id[19]!);
    }
    expect(seededMessageId(seed, 7)).to.equal(ids[7]);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(seededMessageId('another seed', 7)).to.not.equal(ids[7]);
    expect(seededMessageId(seed, 'batch')).to.not.equal(seededMessageId(seed, 'content'));
  });
});
