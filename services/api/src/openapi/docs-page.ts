import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express } from 'express';
import { PAGE_CSP } from '../http/dashboard-static.js';
import { API_BASE } from '../http/route-table.js';

/** Where the document is served (features/ops: no token). */
export const OPENAPI_PATH = `${API_BASE}/openapi.json`;

/** swagger-ui-dist's folder, found through Node's resolution like any dependency. */
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The only files of the package the page needs. */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Messenger Gateway API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl: null keeps Swagger UI from sending the document to its public validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: false,
});
`;

/** `/docs`: Swagger UI (the npm package swagger-ui-dist, served from here: no CDN) on the document. */
export function mountDocs(app: Express): void {
  app.use(['/docs', '/docs/*rest'], (_req, res, next) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    next();
  });
  app.get('/docs', (_req, res) => {
    res.status(200).type('text/html; charset=utf-8').send(PAGE);
  });
  app.get('/docs/init.js', (_req, res) => {
    res.status(200).type('text/javascript; charset=utf-8').send(INIT);
  });
  app.get('/docs/assets/:file', (req, res) => {
    const file = String(req.params.file);
    if (!ASSETS.has(file)) return void res.status(404).type('text/plain').send('Not found\n');
    res.sendFile(path.join(SWAGGER_UI_DIR, file), { maxAge: '1h' });
  });
}
