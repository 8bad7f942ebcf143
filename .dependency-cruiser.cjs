/* global module */
/**
 * The server's dependency rules (`npm run cycles`): code flows one way, from the composition root
 * (app.ts, services.ts and the entry points) into areas, and from areas into shared code. Shared
 * code never imports an area; an area uses another only through that area's public entry
 * (`areas/<name>/index.ts`); nothing imports in a circle. Folder loops are checked by
 * scripts/folder-cycles.ts over the same graph.
 */
const SRC = '^packages/server/src/';
const ROOT = `${SRC}(app|services|main|admin|server|config|stored-secrets|tls)\\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other in a circle load in an order that depends on who imports first.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-imports-no-area',
      severity: 'error',
      comment: 'Shared code (http, db, cache, render, runtime, semantic-layer, ...) serves every area and knows none: it takes what it needs by injection or through an interface.',
      from: { path: `${SRC}(?!areas/)`, pathNot: ROOT },
      to: { path: `${SRC}areas/` },
    },
    {
      name: 'area-through-its-entry',
      severity: 'error',
      comment: 'An area uses another only through the other’s public entry, index.ts; its other files are its own.',
      from: { path: `${SRC}areas/([^/]+)/` },
      to: { path: `${SRC}areas/[^/]+/`, pathNot: [`${SRC}areas/$1/`, `${SRC}areas/[^/]+/index\\.ts$`] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsConfig: { fileName: 'tsconfig.base.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
