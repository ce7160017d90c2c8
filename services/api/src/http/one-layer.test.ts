import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { oneLayer } from './one-layer.js';

// A route's chain as one layer must behave as express's own dispatch of the same handlers: the
// same order, an error (passed, thrown, or a rejected promise) skipping to the error handlers,
// `next('route')` leaving for the next route. Each case runs the same handlers both ways, through
// a real express app over HTTP, and compares what the client gets and what ran.

type Step = (log: string[]) => RequestHandler;
const step =
  (name: string): Step =>
  (log) =>
  (_req, _res, next) => {
    log.push(name);
    next();
  };
const answer: Step = (log) => (_req, res) => {
  log.push('answer');
  res.json({ ok: true });
};
const passes =
  (name: string, err: unknown): Step =>
  (log) =>
  (_req, _res, next) => {
    log.push(name);
    next(err);
  };
const throws: Step = (log) => () => {
  log.push('throws');
  throw new Error('thrown');
};
const rejects: Step = (log) => async () => {
  log.push('rejects');
  await Promise.resolve();
  throw new Error('rejected');
};
const laterAnswer: Step = (log) => (_req, res, next) => {
  log.push('later');
  setImmediate(() => (res.headersSent ? undefined : next()));
};
/** An error handler like the /send limit's: looks at the error, passes it (or another) on. */
const onError =
  (name: string, replace?: Error) =>
  (log: string[]): ErrorRequestHandler =>
  (err: Error, _req, _res, next) => {
    log.push(`${name}:${err.message}`);
    next(replace ?? err);
  };
const swallow =
  (log: string[]): ErrorRequestHandler =>
  (err: Error, _req, _res, next) => {
    log.push(`swallow:${err.message}`);
    next();
  };

interface Case {
  name: string;
  steps: Step[];
  errors?: ((log: string[]) => ErrorRequestHandler)[];
}

const CASES: Case[] = [
  { name: 'every step in order, then the answer', steps: [step('a'), step('b'), answer] },
  {
    name: 'an error passed to next skips the rest',
    steps: [step('a'), passes('b', new Error('no')), answer],
  },
  {
    name: 'an error reaches the error handlers in order, each may replace it',
    steps: [passes('a', new Error('first'))],
    errors: [onError('e1', new Error('second')), onError('e2')],
  },
  { name: 'a thrown error', steps: [step('a'), throws, answer], errors: [onError('e')] },
  { name: 'a rejected promise', steps: [rejects, answer], errors: [onError('e')] },
  { name: 'an error handled by an error handler goes on past the route', steps: [throws], errors: [swallow] },
  { name: "next('route') leaves for the next route", steps: [passes('a', 'route'), answer] },
  { name: 'a step that calls next later', steps: [laterAnswer, step('b'), answer] },
  { name: 'the chain ends without an answer: on to the next route', steps: [step('a'), step('b')] },
];

async function serve(build: (app: express.Express, log: string[]) => void) {
  const log: string[] = [];
  const app = express();
  build(app, log);
  app.post('/r', (_req, res) => {
    log.push('next route');
    res.status(404).json({ next: true });
  });
  app.use(((err: Error, _req, res, _next) => {
    log.push(`final:${err.message}`);
    res.status(500).json({ error: err.message });
  }) as ErrorRequestHandler);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/r`, { method: 'POST' });
  const result = { status: res.status, body: await res.json(), log };
  await new Promise((resolve) => server.close(resolve));
  return result;
}

describe('oneLayer: a route chain as one express layer', () => {
  for (const c of CASES) {
    it(`behaves as express's own dispatch: ${c.name}`, async () => {
      const ours = await serve((app, log) =>
        app.post(
          '/r',
          oneLayer(
            c.steps.map((s) => s(log)),
            (c.errors ?? []).map((e) => e(log)),
          ),
        ),
      );
      const express5 = await serve((app, log) =>
        app.post('/r', ...c.steps.map((s) => s(log)), ...(c.errors ?? []).map((e) => e(log))),
      );
      expect(ours).to.deep.equal(express5);
      expect(ours.log.length, 'something ran').to.be.greaterThan(0);
    });
  }

  it('returns a lone handler as it is (no wrapper for a chain of one)', () => {
    const h: RequestHandler = (_req, res) => void res.end();
    expect(oneLayer([h])).to.equal(h);
  });
});
