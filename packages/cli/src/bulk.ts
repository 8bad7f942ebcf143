/** Shared by `move` and `delete`: progress, Ctrl-C, the failed-items table and the exit code. */
import { BulkInterruptedError, formatItemRef, MAX_CHUNK_SIZE, type BulkOptions, type ItemRef, type WorkspaceBulkFailure } from '@mapi/client';
import { describeError, EXIT, UsageError, type ErrorContext } from './errors.js';
import { plural, write, writeTable, type Column } from './output.js';
import { createProgress, type ProgressReporter } from './progress.js';

export function parseChunkSize(value: string | undefined): number {
  if (value === undefined) return MAX_CHUNK_SIZE;
  const size = Number(value);
  if (!/^\d+$/.test(value) || size < 1 || size > MAX_CHUNK_SIZE)
    throw new UsageError(`--chunk-size must be a whole number from 1 to ${MAX_CHUNK_SIZE}, got "${value}".`);
  return size;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** How a job ended. `result` is what the server applied, complete even when the job stopped early. */
export interface JobOutcome<R> {
  result: R;
  /** Items never sent (interrupted or stopped by a request-level error). */
  pending: ItemRef[];
  /** Items of the request that failed: the server may have applied some of them. */
  unconfirmed: ItemRef[];
  interrupted: boolean;
  /** The signal that interrupted the job: Ctrl-C (SIGINT) or SIGTERM. */
  signal?: StopSignal;
  /** The request-level error that stopped the job, if one did. */
  error?: unknown;
}

type StopSignal = 'SIGINT' | 'SIGTERM';

/** The exit code of an interrupted job, by signal: 128 + the signal's number, as shells report it. */
function interruptedCode(signal: StopSignal | undefined): number {
  return signal === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED;
}

/**
 * Runs a bulk call with a progress reporter and signal handlers. The first Ctrl-C or SIGTERM
 * aborts between requests (the request in flight completes, so the record of what was applied
 * stays exact); a second one exits at once. Every way out stops the progress bar first, as the bar
 * hides the cursor and turns off line wrapping until it is stopped: exiting without that leaves
 * the terminal so.
 */
export async function runJob<R>(
  verb: 'moved' | 'deleted',
  start: (options: BulkOptions) => Promise<R>,
  chunkSize: number,
  progress: ProgressReporter = createProgress(verb),
): Promise<JobOutcome<R>> {
  const controller = new AbortController();
  let signal: StopSignal | undefined;
  const onSignal = (name: NodeJS.Signals) => {
    const received: StopSignal = name === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
    if (signal) {
      progress.stop();
      return process.exit(interruptedCode(received));
    }
    signal = received;
    const what = received === 'SIGINT' ? 'Interrupted' : 'Terminated';
    progress.note(`${what}: stopping after the request in flight (${received === 'SIGINT' ? 'Ctrl-C' : 'a second signal'} again to quit at once)...`);
    controller.abort();
  };
  // Covers what the handlers above cannot: process.exit elsewhere and uncaught exceptions, after
  // which Node still emits 'exit' (and writes to a terminal are synchronous, so they get out).
  const onExit = () => progress.stop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  try {
    const result = await start({ chunkSize, signal: controller.signal, onProgress: (p) => progress.update(p) });
    // A signal during the last request changed nothing: every item was sent and answered.
    return { result, pending: [], unconfirmed: [], interrupted: false };
  } catch (error) {
    if (!(error instanceof BulkInterruptedError)) throw error;
    const stopped = error as BulkInterruptedError & { result: R };
    // A request that failed after a signal arrived is still the news: its error is kept.
    const cause = stopped.name === 'AbortError' ? undefined : (stopped.cause ?? stopped);
    return {
      result: stopped.result,
      pending: stopped.pending,
      unconfirmed: stopped.unconfirmed,
      interrupted: signal !== undefined,
      ...(signal ? { signal } : {}),
      ...(cause ? { error: cause } : {}),
    };
  } finally {
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  }
}

export const FAILED_COLUMNS: Column<WorkspaceBulkFailure>[] = [
  { header: 'ITEM', value: (f) => formatItemRef(f) },
  { header: 'STATUS', value: (f) => f.error.status },
  { header: 'MESSAGE', value: (f) => f.error.message },
];

/** The failed table, and the pending list when the job stopped early; for the text output. */
export function writeFailuresAndPending(failed: readonly WorkspaceBulkFailure[], outcome: JobOutcome<unknown>, deploymentId: number): void {
  const { pending, unconfirmed } = outcome;
  if (failed.length > 0) {
    write(`\n${plural(failed.length, 'item')} failed:`);
    writeTable(FAILED_COLUMNS, failed, '');
  }
  if (unconfirmed.length > 0) {
    write(
      `\n${plural(unconfirmed.length, 'item')} in the request that failed, possibly applied (\`mapi folders tree ${deploymentId} --items\` shows where each item is): ${unconfirmed.map(formatItemRef).join(' ')}`,
    );
  }
  if (pending.length > 0) {
    write(`\n${plural(pending.length, 'item')} not sent: ${pending.map(formatItemRef).join(' ')}`);
  }
}

/** The exit code of a finished job, and the error report on stderr when a request-level error stopped it. */
export function jobExitCode(outcome: JobOutcome<unknown>, failed: number, context: ErrorContext): number {
  if (outcome.error !== undefined) {
    process.stderr.write(`${describeError(outcome.error, context).join('\n')}\n`);
    return EXIT.ERROR;
  }
  if (outcome.interrupted) return interruptedCode(outcome.signal);
  return failed > 0 ? EXIT.PARTIAL : EXIT.OK;
}

/** The JSON printed for a job: the client's result object, plus what was not sent when it stopped early. */
export function jobJson(outcome: JobOutcome<object>): object {
  if (outcome.pending.length === 0 && outcome.unconfirmed.length === 0 && !outcome.interrupted && outcome.error === undefined) return outcome.result;
  const error = outcome.error as { status?: number; code?: string; detail?: string; requestId?: string; message?: string } | undefined;
  return {
    ...outcome.result,
    pending: outcome.pending,
    unconfirmed: outcome.unconfirmed,
    interrupted: outcome.interrupted,
    ...(error ? { error: { message: error.message, status: error.status, code: error.code, detail: error.detail, requestId: error.requestId } } : {}),
  };
}

/** What a dry run prints: the de-duplicated items in the chunks they would be sent in. */
export function writeDryRun(action: (items: string) => string, distinct: ItemRef[], duplicates: number, chunkSize: number, notes: string[]): void {
  const batches = chunks(distinct, chunkSize);
  const counted = `${plural(distinct.length, 'item')}${duplicates > 0 ? ` (${plural(duplicates, 'duplicate')} left out)` : ''}`;
  const lines = ['Dry run: nothing was sent.', `${action(counted)}, in ${plural(batches.length, 'request')}:`, ...notes];
  batches.forEach((batch, index) => {
    lines.push(`request ${index + 1} of ${batches.length} (${plural(batch.length, 'item')}):`);
    for (const ref of batch) lines.push(`  ${formatItemRef(ref)}`);
  });
  write(lines.join('\n'));
}
