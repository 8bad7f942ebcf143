import fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The API reference: the served OpenAPI document rendered by Redoc's standalone bundle, read from
 * `node_modules` (the `redoc` package), so the page needs no CDN and works offline.
 */

/** Where the server serves the page and its scripts (docs/api/reference.md). */
export const REFERENCE_PATH = '/api/v1/reference';
export const REFERENCE_BUNDLE_PATH = `${REFERENCE_PATH}/redoc.standalone.js`;
export const REFERENCE_SCRIPT_PATH = `${REFERENCE_PATH}/reference.js`;
/** The document the page renders: the one `GET /api/v1/spec` serves. */
export const SPEC_PATH = '/api/v1/spec';

/** Redoc's options: the three-panel layout, no "try it" (the document's calls need a key of their own). */
const REDOC_OPTIONS = { expandResponses: '200,201', jsonSampleExpandLevel: 2, pathInMiddlePanel: true, sortPropsAlphabetically: false };

let bundle: Buffer | undefined;

/** Redoc's standalone bundle, read once per process from the installed package. */
export function redocBundle(): Buffer {
  bundle ??= fs.readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
  return bundle;
}

const STYLE = `
  body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  #sign-in { max-width: 40rem; margin: 4rem auto; padding: 0 1.5rem; line-height: 1.5; }
  #sign-in input { width: 100%; box-sizing: border-box; padding: 0.5rem; font: inherit; margin: 0.25rem 0 0.75rem; }
  #sign-in button { padding: 0.5rem 1rem; font: inherit; }
  #problem { color: #b00020; }
  code { font-size: 0.95em; }`;

/**
 * The page the server serves. The document it renders takes a credential (`GET /api/v1/spec`, like
 * every operation under /api/v1), so the page asks for an API key or access token, fetches the
 * document with it from this same origin, and hands it to Redoc; the key is kept nowhere.
 */
export function referencePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mapi API reference</title>
<style>${STYLE}
</style>
</head>
<body>
<form id="sign-in" data-spec-url="${SPEC_PATH}">
  <h1>mapi API reference</h1>
  <p>This page renders the OpenAPI document this server serves at <code>GET ${SPEC_PATH}</code>.
  That document, like every operation under <code>/api/v1</code>, takes a credential: paste an API key
  (<code>mapi_…</code>) or an OAuth access token. It is sent once, to this server, to read the document,
  and kept nowhere.</p>
  <label for="key">API key</label>
  <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required>
  <button type="submit">Show the reference</button>
  <p id="problem" role="alert"></p>
</form>
<div id="reference"></div>
<script src="${REFERENCE_BUNDLE_PATH}"></script>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
</body>
</html>
`;
}

/** The page's own script: read the document with the key given, then let Redoc render it. */
export function referenceScript(): string {
  return `'use strict';
(function () {
  var form = document.getElementById('sign-in');
  var problem = document.getElementById('problem');
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var key = form.elements.key.value.trim();
    problem.textContent = '';
    fetch(form.getAttribute('data-spec-url'), { headers: { Authorization: 'Bearer ' + key, Accept: 'application/json' }, credentials: 'omit' })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(response.status + ': ' + (body && body.message ? body.message : response.statusText));
          return body;
        });
      })
      .then(function (doc) {
        form.elements.key.value = '';
        form.hidden = true;
        Redoc.init(doc, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('reference'));
      })
      .catch(function (error) {
        problem.textContent = 'The document could not be read: ' + error.message;
      });
  });
})();
`;
}

/** JSON inside a script element: nothing in it may close the element or open a comment. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * A file that needs no server: the document and Redoc's bundle inlined into one page
 * (`npm run reference` writes it to docs/api/reference.html from the committed openapi.json).
 */
export function standaloneReference(doc: unknown): string {
  const script = redocBundle()
    .toString('utf8')
    .replace(/<\/script/gi, '<\\/script');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="img-src 'self' data:; connect-src 'none'">
<title>mapi API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<!-- Generated by \`npm run reference\` from packages/server/openapi.json (the document GET ${SPEC_PATH} serves); do not edit. -->
<div id="reference"></div>
<script>${script}</script>
<script id="openapi-document" type="application/json">${scriptJson(doc)}</script>
<script>Redoc.init(JSON.parse(document.getElementById('openapi-document').textContent), ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('reference'));</script>
</body>
</html>
`;
}
