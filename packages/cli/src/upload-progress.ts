import cliProgress from 'cli-progress';
import type { PushProgress } from '@mapi/client';
import { formatBytes } from './output.js';

/** Reports a push's uploads on stderr; stdout stays reserved for the result. */
export interface UploadProgress {
  update(progress: PushProgress): void;
  /** A message that must not be drawn over by the bar. */
  note(text: string): void;
  /** Ends the bar and restores the cursor it hid; safe to call again. */
  stop(): void;
}

/** "sent 3/12 files, 4.2 KiB of 9.8 KiB": what a log file or CI output shows. */
export function uploadLine(p: PushProgress): string {
  return `sent ${p.done}/${p.total} files, ${formatBytes(p.bytesSent)} of ${formatBytes(p.bytesTotal)}`;
}

/** Says nothing: for --json, where stderr is for errors only. */
export const silentProgress: UploadProgress = { update() {}, note() {}, stop() {} };

/**
 * A bar on a terminal. Otherwise lines, at most one a second (each file is a request, and a push
 * of a thousand files would print a thousand lines) and always one for the last file, so the log
 * ends with the total.
 */
export function createUploadProgress(stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now, everyMs = 1000): UploadProgress {
  if (!stream.isTTY) {
    let last = now();
    return {
      update(p) {
        if (p.done === 0) return;
        if (p.done < p.total && now() - last < everyMs) return;
        last = now();
        stream.write(`${uploadLine(p)}\n`);
      },
      note: (text) => void stream.write(`${text}\n`),
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: '{bar} {value}/{total} files | {sent} of {size}', hideCursor: true, clearOnComplete: false, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  const payload = (p: PushProgress) => ({ sent: formatBytes(p.bytesSent), size: formatBytes(p.bytesTotal) });
  return {
    update(p) {
      if (stopped || p.total === 0) return;
      if (!started) {
        bar.start(p.total, p.done, payload(p));
        started = true;
      } else bar.update(p.done, payload(p));
    },
    note(text) {
      stream.write(started && !stopped ? `\n${text}\n` : `${text}\n`);
    },
    stop() {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}
