import fs from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with the ten slowest files and one plain line, `N passed, N failed` (and `, N skipped` when any were),
 * which CI and humans can read without knowing Vitest's own summary format.
 */
export default class PlainSummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && module.children.size === 0) failed++;
    }
    // Where the time goes: each file's import, setup and tests, so the next person sees what to speed up.
    const files = testModules
      .map((module) => {
        const d = module.diagnostic();
        return {
          file: module.relativeModuleId,
          seconds: (d.collectDuration + d.setupDuration + d.duration) / 1000,
          tests: [...module.children.allTests()].length,
        };
      })
      .sort((a, b) => b.seconds - a.seconds);
    const slowest = files.slice(0, 10);
    // `npm run test:durations`: the order a fresh clone starts its files in (vitest.sequencer.ts).
    const out = process.env.TEST_DURATIONS_FILE;
    if (out) fs.writeFileSync(out, JSON.stringify(Object.fromEntries(files.map((f) => [f.file, Math.round(f.seconds)])), null, 1) + '\n');
    if (slowest.length > 1) {
      process.stdout.write('\nThe ten slowest files (import, setup and tests):\n');
      for (const { file, seconds, tests } of slowest)
        process.stdout.write(`  ${seconds.toFixed(1).padStart(7)} s  ${String(tests).padStart(5)} tests  ${file}\n`);
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }
}
