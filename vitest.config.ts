import { defineConfig } from 'vitest/config';
import LongestFirst from './vitest.sequencer.js';

export default defineConfig({
  // Vitest starts the files that took longest last time first, which keeps a long file from ending
  // the run alone; the durations live in this cache, kept out of node_modules so that `npm ci`
  // does not wipe them. A fresh clone goes by .ci/test-durations.json instead (vitest.sequencer.ts).
  cacheDir: '.vitest-cache',
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each test app has its own SQLite file or PostgreSQL schema.
    pool: 'forks',
    // A worker keeps its loaded modules from one file to the next (each file still gets its own
    // apps and stores): importing the server and compiling its schemas once per worker rather
    // than once per file took a 10-file sample from 110 s to 41 s. No test mocks modules or
    // changes process-wide state without putting it back.
    isolate: false,
    // Many files spend their time waiting on server processes, sockets and PostgreSQL, so half as
    // many workers again as cores keeps the cores busy: on 2 cores (3 workers) 268 s became 190 s.
    maxWorkers: '150%',
    reporters: ['default', './vitest.summary.ts'],
    // A fresh clone has no cache of durations: the committed ones order its files.
    sequence: { sequencer: LongestFirst },
    globalSetup: ['./vitest.build.ts'],
  },
});
