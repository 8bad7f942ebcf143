import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Vitest starts the files that took longest last time first (else the largest first), which keeps
  // a long file from ending the run alone; the durations live in this cache, kept out of
  // node_modules so that CI's `npm ci` does not wipe them before every run.
  cacheDir: '.vitest-cache',
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each test app has its own SQLite file or PostgreSQL schema.
    pool: 'forks',
    // Many files spend their time waiting on server processes, sockets and PostgreSQL, so half as
    // many workers again as cores keeps the cores busy: on 2 cores (3 workers) 268 s became 190 s.
    maxWorkers: '150%',
    reporters: ['default', './vitest.summary.ts'],
    globalSetup: ['./vitest.build.ts'],
  },
});
