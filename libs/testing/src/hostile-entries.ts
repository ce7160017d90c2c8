/**
 * List entries that are no entries: what a careless or hostile client puts in a list-shaped field
 * of a request (null, numbers, booleans, arrays, odd objects, an own `__proto__`, the empty
 * string). Each user adds the huge string it wants, sized for the body limit it probes.
 */
export const HOSTILE_LIST_ENTRIES: readonly unknown[] = [
  null,
  0,
  -1,
  -1.5,
  1e308,
  true,
  false,
  [],
  [null],
  ['15551234567'],
  {},
  { phone: null },
  { phone: 15551234567 },
  { phone: ['15551234567'] },
  { phone: '15551234567', odd: true },
  { phone: '15551234567', odd: [1, 2] },
  { phone: '15551234567', vars: null },
  { vars: { name: 'x' } },
  { foo: 'bar' },
  JSON.parse('{"__proto__": {"phone": "15551234567"}}') as unknown,
  '',
];
