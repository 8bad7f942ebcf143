import cliProgress from 'cli-progress';
import type { DbtSyncStatus } from '@mapi/client';

/** Shows a sync's progress on stderr while it is followed; stdout stays for the result. */
export interface SyncProgress {
  update(status: DbtSyncStatus): void;
  /** Ends the bar and restores the cursor; safe to call again. */
  stop(): void;
}

/** "PROCESSING_MANIFEST 25% Processing the manifest": one line per stage a log or CI output shows. */
export function syncProgressLine(status: DbtSyncStatus): string {
  const message = status.progress.message ?? status.error ?? '';
  return `${status.status} ${status.progress.percentComplete}%${message ? ` ${message}` : ''}`;
}

/**
 * A bar with the stage on a terminal; elsewhere a line each time the stage (or its message)
 * changes, so a log holds one line per step rather than one per poll.
 */
export function createSyncProgress(stream: NodeJS.WriteStream = process.stderr): SyncProgress {
  if (!stream.isTTY) {
    let last = '';
    return {
      update(status) {
        const line = syncProgressLine(status);
        if (line !== last) stream.write(`${line}\n`);
        last = line;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: '{bar} {percentage}% | {stage} {message}', hideCursor: true, clearOnComplete: false, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  return {
    update(status) {
      if (stopped) return;
      const payload = { stage: status.status, message: status.progress.message ?? '' };
      if (!started) {
        bar.start(100, status.progress.percentComplete, payload);
        started = true;
      } else bar.update(status.progress.percentComplete, payload);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (started) bar.stop();
    },
  };
}
