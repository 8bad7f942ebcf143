import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BulkInterruptedError, type BulkMoveResult, type BulkOptions } from '@mapi/client';
import { jobExitCode, runJob } from '../src/bulk.js';
import { createProgress, type ProgressReporter } from '../src/progress.js';

/**
 * The ways out of a bulk job, in-process: each must stop the progress bar, which hides the cursor
 * and turns off line wrapping until it is stopped.
 */

type Event = 'update' | 'note' | 'stop' | 'exit';

/** A reporter that records calls, and process.exit recording instead of exiting, in one timeline. */
function recorder() {
  const events: Event[] = [];
  const progress: ProgressReporter = {
    update: () => void events.push('update'),
    note: () => void events.push('note'),
    stop: () => void events.push('stop'),
  };
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => void events.push('exit')) as never);
  return { events, progress, exit };
}

/** Listeners runJob added for `event`, to call them as the signal would, without signalling this process. */
function added(event: 'SIGINT' | 'SIGTERM' | 'exit', before: unknown[]): ((...args: unknown[]) => void)[] {
  return process.listeners(event as 'SIGINT').filter((listener) => !before.includes(listener)) as ((...args: unknown[]) => void)[];
}

const snapshot = () => ({ SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM'), exit: process.listeners('exit') });

const empty = (): BulkMoveResult => ({ moved: [], failed: [], skipped: [], requests: 0 });

/** A job whose request stays in flight until `finish` is called, then ends as a real one would when aborted. */
function pendingJob() {
  let finish = () => {};
  const start = (options: BulkOptions) => {
    options.onProgress?.({ total: 2, done: 0, moved: 0, failed: 0, skipped: 0, requests: 0 });
    return new Promise<BulkMoveResult>((resolve, reject) => {
      finish = () => {
        if (!options.signal?.aborted) return resolve(empty());
        reject(new BulkInterruptedError(empty(), [{ type: 'WORKBOOK', id: 2 }], [], options.signal.reason, true));
      };
    });
  };
  return { start, finish: () => finish() };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('runJob', () => {
  it('a second Ctrl-C stops the bar, then exits 130', async () => {
    const { events, progress } = recorder();
    const before = snapshot();
    const job = pendingJob();
    const running = runJob('moved', job.start, 1, progress);
    const [onSigint] = added('SIGINT', before.SIGINT);
    expect(onSigint).toBeDefined();
    onSigint?.('SIGINT');
    expect(events).toEqual(['update', 'note']);
    onSigint?.('SIGINT');
    expect(events).toEqual(['update', 'note', 'stop', 'exit']);
    expect(process.exit).toHaveBeenCalledWith(130);
    job.finish();
    await running;
  });

  it('SIGTERM is a first Ctrl-C: the job stops between requests and exits 143; a second SIGTERM stops the bar and exits 143', async () => {
    const { events, progress, exit } = recorder();
    const before = snapshot();
    const job = pendingJob();
    const running = runJob('moved', job.start, 1, progress);
    const [onSigterm] = added('SIGTERM', before.SIGTERM);
    onSigterm?.('SIGTERM');
    expect(exit).not.toHaveBeenCalled();
    onSigterm?.('SIGTERM');
    expect(events.slice(-2)).toEqual(['stop', 'exit']);
    expect(exit).toHaveBeenCalledWith(143);
    job.finish();
    const outcome = await running;
    expect(outcome).toMatchObject({ interrupted: true, signal: 'SIGTERM', pending: [{ type: 'WORKBOOK', id: 2 }] });
    expect(jobExitCode(outcome, 0, {})).toBe(143);
    // Every listener runJob added is gone once it returns.
    expect(snapshot()).toEqual(before);
  });

  it('an unexpected exception stops the bar and leaves no listener behind; so does an exit from anywhere during the job', async () => {
    const { events, progress } = recorder();
    const before = snapshot();
    await expect(runJob('moved', () => Promise.reject(new Error('boom')), 1, progress)).rejects.toThrow('boom');
    expect(events).toEqual(['stop']);
    expect(snapshot()).toEqual(before);

    const job = pendingJob();
    const running = runJob('deleted', job.start, 1, progress);
    const [onExit] = added('exit', before.exit);
    onExit?.(1);
    expect(events.at(-1)).toBe('stop');
    job.finish();
    await running;
  });
});

describe('createProgress on a terminal', () => {
  it('stop() shows the cursor again and turns line wrapping back on', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
    let written = '';
    stream.on('data', (chunk: Buffer) => (written += chunk.toString()));
    const progress = createProgress('moved', stream as unknown as NodeJS.WriteStream);
    progress.update({ total: 3, done: 0, moved: 0, failed: 0, skipped: 0, requests: 0 });
    expect(written).toContain('\u001b[?25l');
    expect(written).toContain('\u001b[?7l');
    progress.stop();
    expect(written).toContain('\u001b[?25h');
    expect(written).toContain('\u001b[?7h');
    progress.stop();
  });
});
