/**
 * The writes a store adds to a transaction that other writes share (a message's content, its
 * batch's counts). An ioredis transaction or pipeline is one; so is anything that records the
 * writes to run them elsewhere (the API's accept script runs them inside one Lua call).
 */
export interface StagedWrites {
  hset(key: string, fields: Record<string, string | Buffer>): unknown;
  hsetnx(key: string, field: string, value: string): unknown;
  hincrby(key: string, field: string, increment: number): unknown;
  hdel(key: string, field: string): unknown;
  expire(key: string, seconds: number): unknown;
  zadd(key: string, ...args: (string | number)[]): unknown;
  zremrangebyscore(key: string, min: string | number, max: string | number): unknown;
}
