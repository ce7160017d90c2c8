/**
 * The baseline of the accept bench: a bare express 5 app that parses the same JSON body as
 * POST /send and answers 202 with an id — what "accepting a message" costs with no gateway.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';

const app = express();
app.post('/api/messenger/v1/send', express.json({ limit: '15mb' }), (req, res) => {
  if (!req.body || typeof req.body !== 'object') return void res.status(400).json({ success: false });
  res.status(202).json({ success: true, messageId: randomUUID() });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
