import cliProgress from 'cli-progress';
import type { BulkProgress } from '@mapi/client';
import { plural } from './output.js';

/** Reports a bulk job's progress on stderr; stdout stays reserved for the result. */
export interface ProgressReporter {
  update(progress: BulkProgress): void;
  /** A message that must not be drawn over by the bar (e.g. "interrupting"). */
  note(text: string): void;
  /** Ends the bar and restores the cursor and line wrapping it turned off; safe to call again. */
  stop(): void;
}

/** "moved 100/250, 3 failed": what a log file or CI output should show after each request. */
export function progressLine(verb: string, p: BulkProgress): string {
  // `moved` counts applied items for deletes too.
  let line = `${verb} ${p.moved}/${p.total}, ${p.failed} failed`;
  if (p.skipped > 0) line += `, ${p.skipped} skipped`;
  return line;
}

/**
 * A bar on a terminal; plain lines when stderr is a file or pipe, where a redrawn bar would be
 * noise. Lines are printed only after requests (not for the initial "nothing done" call), so the
 * number of lines equals the number of requests sent.
 */
export function createProgress(verb: 'moved' | 'deleted' | 'provisioned' | 'added' | 'removed', stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  if (!stream.isTTY) {
    return {
      update(p) {
        if (p.requests > 0) stream.write(`${progressLine(verb, p)}\n`);
      },
      note: (text) => void stream.write(`${text}\n`),
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `{bar} {value}/{total} | ${verb} {applied} | failed {failed}{skippedText} | {requestsText}`,
      hideCursor: true,
      clearOnComplete: false,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  const payload = (p: BulkProgress) => ({
    applied: p.moved,
    failed: p.failed,
    requestsText: plural(p.requests, 'request'),
    skippedText: p.skipped > 0 ? ` | skipped ${p.skipped}` : '',
  });
  return {
    update(p) {
      if (stopped) return;
      if (!started) {
        bar.start(p.total, p.done, payload(p));
        started = true;
      } else {
        bar.setTotal(p.total);
        bar.update(p.done, payload(p));
      }
    },
    note(text) {
      // Finish the bar's line first so the note starts on a line of its own.
      stream.write(`\n${text}\n`);
    },
    stop() {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}
