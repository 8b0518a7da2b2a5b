/**
 * Swagger UI, served from the installed `swagger-ui-dist` package (never a CDN) with our own page
 * and initializer pointing at `/openapi.json`. The assets are read once when the server starts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface StaticAsset {
  contentType: string;
  body: Uint8Array | string;
}

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>majordomus — Swagger UI</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/initializer.js"></script>
  </body>
</html>
`;

const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    validatorUrl: null
  });
});
`;

const FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Path below `/docs` → asset; `''` is the page itself. */
export function loadSwaggerAssets(): ReadonlyMap<string, StaticAsset> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map<string, StaticAsset>([
    ['', { contentType: 'text/html; charset=utf-8', body: PAGE }],
    ['/initializer.js', { contentType: 'text/javascript; charset=utf-8', body: INITIALIZER }],
  ]);
  for (const [file, contentType] of Object.entries(FILES)) {
    assets.set(`/${file}`, { contentType, body: readFileSync(join(dist, file)) });
  }
  return assets;
}
