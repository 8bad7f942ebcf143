import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each test app has its own SQLite file or PostgreSQL schema.
    pool: 'forks',
    reporters: ['default', './vitest.summary.ts'],
    globalSetup: ['./vitest.build.ts'],
  },
});
