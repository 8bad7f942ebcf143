import { defineConfig } from 'vite';

/**
 * The embedded dashboard page (served by the server at /embed/dashboard/{publicId}). Files get
 * content hashes in their names and live under /embed/assets/, which the server caches for a
 * year; the HTML is served no-cache. Charts (Vega; the server compiles Vega-Lite) are a chunk of their own, loaded
 * with the first chart, so the first load stays small.
 */
export default defineConfig({
  base: '/embed/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // The CSP allows no inline script: Vite's module-preload polyfill is not needed by current browsers.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2000,
  },
});
