import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { createLogger } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { bornWithAppPrototypes, createHttpServer } from './server.js';

// Requests and responses are made with the express app's prototypes from the start (server.ts
// `bornWithAppPrototypes`): express's own Object.setPrototypeOf on each request then changes
// nothing, and the objects are otherwise Node's own — the app serves them as it always did.

const TIMEOUTS = { headersTimeoutMs: 5000, requestTimeoutMs: 10_000 };

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('API server: request objects born with the app’s prototypes', () => {
  it('When a request arrives, then its request and response already have the app’s prototypes, are still Node’s messages, and express serves them as before', async () => {
    const app = express();
    app.set('etag', false);
    app.post('/echo', express.json(), (req, res) => {
      res.status(201).json({ sameApp: req.app === app, body: req.body as unknown, ip: req.ip });
    });
    const server = createHttpServer(
      app,
      TIMEOUTS,
      createLogger({ level: 'silent', service: 't' }),
      createMetrics(),
    );
    const seen: { request: boolean; response: boolean; messages: boolean }[] = [];
    // Registered before express's listener runs: what Node made, before express touched it.
    server.prependListener('request', (req, res) =>
      seen.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
        messages: req instanceof http.IncomingMessage && res instanceof http.ServerResponse,
      }),
    );
    const url = await listen(server);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${url}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ i }),
        });
        expect(res.status).to.equal(201);
        expect(await res.json()).to.deep.equal({ sameApp: true, body: { i }, ip: '127.0.0.1' });
      }
      expect(seen).to.deep.equal(Array(3).fill({ request: true, response: true, messages: true }));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('When the listener is not an express app (no prototypes of its own), then Node’s own classes are used', () => {
    expect(bornWithAppPrototypes({})).to.deep.equal({});
    const made = bornWithAppPrototypes({ request: {}, response: {} });
    expect(made.IncomingMessage).to.be.a('function');
    expect(made.ServerResponse).to.be.a('function');
  });
});
