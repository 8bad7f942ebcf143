import { Worker } from 'node:worker_threads';
import { STATEMENT_TIMEOUT_SIGNAL } from './protocol.js';

/**
 * QUERY_TIMEOUT_MS for a SQLite data source. better-sqlite3 runs a statement synchronously on the
 * runtime's only thread and offers no way to interrupt it (no `sqlite3_interrupt`, no progress
 * handler), so nothing on that thread can stop a statement that runs too long: it would hold the
 * runtime, and every query queued behind it, for as long as it takes.
 *
 * A watchdog thread does instead. The runtime marks each statement's start and end in shared
 * memory (two plain stores, no system call, nothing on the statement's path); the watchdog looks
 * every tenth of the limit (at least every 20 ms, at most every second). A statement still running
 * past the limit gets a line on stderr (the deployment's log) and the whole runtime stopped with
 * STATEMENT_TIMEOUT_SIGNAL: its server answers the query 400 with the limit, and restarts the
 * runtime at once, as a restart it asked for rather than a crash (runtime/supervisor.ts).
 * PostgreSQL has its own `statement_timeout` and needs none of this.
 */
export interface StatementWatchdog {
  /** Runs `statement`, marked as running for the watchdog while it does. */
  run<T>(statement: () => T): T;
}

/** The watchdog thread: `state` holds 1 while a statement runs, `startedAt` that statement's start (ms since the epoch). */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { state, startedAt, limitMs, tickMs, signal } = workerData;
const clock = new Float64Array(startedAt);
const running = new Int32Array(state);
setInterval(() => {
  if (Atomics.load(running, 0) !== 1) return;
  const ranMs = Date.now() - clock[0];
  if (ranMs < limitMs) return;
  fs.writeSync(2, 'A statement ran for ' + ranMs + ' ms, longer than the ' + limitMs + ' ms a query may take (QUERY_TIMEOUT_MS): the runtime stops to end it and is started again\\n');
  process.kill(process.pid, signal);
}, tickMs);
`;

export function statementWatchdog(limitMs: number): StatementWatchdog {
  const state = new SharedArrayBuffer(4);
  const startedAt = new SharedArrayBuffer(8);
  const running = new Int32Array(state);
  const clock = new Float64Array(startedAt);
  const tickMs = Math.min(1_000, Math.max(20, Math.floor(limitMs / 10)));
  // Started with the first statement: a runtime that is never queried costs no thread. The thread
  // boots beside that statement and reads its start from shared memory, so it is watched too.
  let worker: Worker | null = null;
  const watch = () => {
    worker = new Worker(WATCHDOG, { eval: true, workerData: { state, startedAt, limitMs, tickMs, signal: STATEMENT_TIMEOUT_SIGNAL } });
    // The watchdog keeps no runtime alive by itself, and ends with it.
    worker.unref();
  };
  return {
    run(statement) {
      clock[0] = Date.now();
      Atomics.store(running, 0, 1);
      if (worker === null) watch();
      try {
        return statement();
      } finally {
        Atomics.store(running, 0, 0);
      }
    },
  };
}
