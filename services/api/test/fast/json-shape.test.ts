import { expect } from 'chai';
import { JsonShapeGuard, type JsonShapeLimits } from '../../src/http/json-shape.js';

const LIMITS: JsonShapeLimits = { maxDepth: 8, maxValues: 20, lists: { to: 3 } };

/** Feeds `text` cut into pieces of `size` bytes; returns the first problem. */
function check(text: string, size: number, limits = LIMITS) {
  const guard = new JsonShapeGuard(limits);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) {
    const problem = guard.feed(bytes.subarray(i, i + size));
    if (problem) return problem;
  }
  return undefined;
}

const SPLITS = [1, 2, 3, 7, 64, 1 << 20];

describe('API: the streaming JSON shape guard', () => {
  it('When bodies of our shape arrive in any chunking, then nothing is refused', () => {
    const bodies = [
      '{"to":["15550000001","15550000002","15550000003"],"text":"a [{ \\" , } ] b"}',
      '{"to":"15550000001","attachment":{"type":"image","url":"https://x.example/a,b,c.png","caption":"\\\\"}}',
      '{ "to" : [ "1" , "2" ] , "text" : "é ü 中文 [[[[[[[[[[" }',
      '[]',
      '',
    ];
    for (const body of bodies)
      for (const size of SPLITS) expect(check(body, size), `${size}: ${body}`).to.equal(undefined);
  });

  it('When nesting goes deeper than the bound, then it is refused at the first bracket too many', () => {
    for (const size of SPLITS) {
      expect(check('['.repeat(9), size)).to.deep.equal({
        path: [],
        message: 'JSON nesting is deeper than 8 levels',
      });
      expect(check('{"a":'.repeat(9), size)?.message).to.equal('JSON nesting is deeper than 8 levels');
      expect(check('['.repeat(8), size), 'eight levels are fine').to.equal(undefined);
    }
  });

  it('When brackets, quotes and commas sit inside strings (escaped quotes too), then they are not counted', () => {
    const inside = `{"text":"${'[{,'.repeat(100)}\\"${'[['.repeat(20)}\\\\"}`;
    for (const size of SPLITS) expect(check(inside, size), String(size)).to.equal(undefined);
    // The escaped backslash ends the string: the brackets after it are structure again.
    expect(check(`{"text":"\\\\"${',1'.repeat(30)}}`, 5)?.message).to.match(/more than 20 values/);
  });

  it('When a top-level list is longer than its limit, then the list is named; other lists count as values', () => {
    for (const size of SPLITS) {
      expect(check('{"to":["1","2","3","4"]}', size)).to.deep.equal({
        path: ['to'],
        message: 'to may list at most 3 phone numbers',
      });
      expect(check('{"to":["1","2","3"]}', size)).to.equal(undefined);
      expect(check('{"other":[1,2,3,4,5]}', size)).to.equal(undefined);
      expect(check(`{"other":[${'0,'.repeat(25)}0]}`, size)?.message).to.equal(
        'The JSON body holds more than 20 values',
      );
    }
  });

  it('When the entries of `to` are personalised objects, then their values count against their own budget (items × listItemValues), not maxValues', () => {
    const limits: JsonShapeLimits = { ...LIMITS, listItemValues: 4 };
    const entry = (i: number) => `{"phone":"${i}","vars":{"a":"1","b":"2","c":"3"}}`;
    // 3 entries × 4 values fit (each holds 3 commas) although they are more than maxValues (20) in all...
    const three = `{"to":[${[1, 2, 3].map(entry).join(',')}],"text":"x"}`;
    for (const size of SPLITS) expect(check(three, size, limits), String(size)).to.equal(undefined);
    // ...and one entry carrying the budget of all three is refused, naming the list.
    const fat = `{"to":[{"phone":"1","vars":{${Array.from({ length: 24 }, (_, i) => `"v${i}":"x"`).join(',')}}}]}`;
    for (const size of SPLITS)
      expect(check(fat, size, limits)).to.deep.equal({
        path: ['to'],
        message: 'to holds more than 12 values',
      });
    // Without listItemValues, they count against maxValues as before.
    expect(check(fat, 7)?.message).to.equal('The JSON body holds more than 20 values');
  });

  it('When "to" is a nested key or a string value, then it is not taken for the top-level list', () => {
    expect(check('{"a":{"to":[1,2,3,4,5]}}', 4)).to.equal(undefined);
    expect(check('{"text":"to","x":[1,2,3,4,5]}', 4)).to.equal(undefined);
  });

  it('When a 13 MB string streams in 64 KiB chunks, then the guard reads it in milliseconds, not seconds', () => {
    const body = Buffer.from(`{"attachment":{"base64":"${'QUFB'.repeat(3_400_000)}"}}`);
    const guard = new JsonShapeGuard(LIMITS);
    const started = performance.now();
    for (let i = 0; i < body.length; i += 65_536) guard.feed(body.subarray(i, i + 65_536));
    const ms = performance.now() - started;
    // How fast it reads is services/api/bench/json-shape.bench.ts's (npm run bench -- json-shape:
    // against JSON.parse and a plain byte scan, same run); here a bound 10 x and more its time.
    expect(ms, `${ms.toFixed(1)} ms`).to.be.lessThan(1000); // quiet: 7 ms
  });
});
