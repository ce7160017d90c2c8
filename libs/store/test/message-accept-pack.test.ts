import { expect } from 'chai';
import { Redis } from 'ioredis';
import { packForLua, type LuaPackable } from '@mgw/store';

/**
 * The accept script (`lua/message-accept-n.lua`) gets its call as one MessagePack argument
 * (`packForLua`, messages/lua-pack.ts beside the code that runs it), read in Redis by
 * `cmsgpack.unpack`, which knows no `bin` type: bytes go as strings. Every size class of every
 * type must come out in Lua as it went in.
 */
describe('the accept call, packed for Redis (packForLua)', () => {
  let redis: Redis;
  before(() => (redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null })));
  after(async () => redis.quit());

  /** Lua flattens what it unpacked: numbers as `%.17g`, strings as their bytes, arrays as `[n` … `]`. */
  const FLATTEN = `
local out = {}
local function walk(v)
  if type(v) == 'table' then
    out[#out + 1] = '[' .. #v
    for _, item in ipairs(v) do walk(item) end
    out[#out + 1] = ']'
  elseif type(v) == 'number' then
    out[#out + 1] = string.format('%.17g', v)
  else
    out[#out + 1] = v
  end
end
walk(cmsgpack.unpack(ARGV[1]))
return out`;
  /** What FLATTEN returns for `v`: numbers to compare by value, bytes to compare exactly. */
  const expected = (v: LuaPackable): (Buffer | number)[] => {
    if (typeof v === 'number') return [v];
    if (typeof v === 'string') return [Buffer.from(v)];
    if (Buffer.isBuffer(v)) return [v];
    return [Buffer.from(`[${v.length}`), ...v.flatMap(expected), Buffer.from(']')];
  };

  it('When integers, doubles, strings, bytes and arrays of every length class are packed, then Lua reads each exactly', async () => {
    const ints = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 10_000_000_000];
    const negatives = [-1, -32, -33, -128, -129, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1];
    const strings = ['', 'a', 'é€', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256)];
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const value: LuaPackable = [
      ints,
      negatives,
      [1.5, -0.25, 1e-7],
      strings,
      [bytes, Buffer.alloc(0), Buffer.alloc(70_000, 0xc4)],
      'y'.repeat(70_000),
      Array.from({ length: 15 }, (_, i) => i),
      Array.from({ length: 16 }, (_, i) => String(i)),
      Array.from({ length: 70_000 }, () => 7),
      [[[['deep']]]],
    ];
    const got = (await redis.callBuffer('EVAL', [FLATTEN, 0, packForLua(value)])) as Buffer[];
    const want = expected(value);
    expect(got.length).to.equal(want.length);
    got.forEach((g, i) => {
      const w = want[i]!;
      if (typeof w === 'number') expect(Number(g.toString()), `item ${i}`).to.equal(w);
      else expect(g.equals(w), `item ${i}: ${g.toString('hex').slice(0, 40)}`).to.equal(true);
    });
  });
});
