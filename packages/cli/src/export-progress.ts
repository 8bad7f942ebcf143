import cliProgress from 'cli-progress';
import type { DashboardExportStatus } from '@mapi/client';

/** Shows an export's progress on stderr while it renders; stdout stays for the file or the result. */
export interface ExportProgress {
  update(status: DashboardExportStatus): void;
  /** Ends the bar and restores the cursor; safe to call again. */
  stop(): void;
}

/** "processing 50%", "failed: <reason>": one line per state a log or CI output shows. */
export function exportProgressLine(status: DashboardExportStatus): string {
  return `${status.status}${status.progress == null ? '' : ` ${status.progress}%`}${status.error ? `: ${status.error}` : ''}`;
}

/** A bar on a terminal; elsewhere a line each time the state changes, not one per poll. */
export function createExportProgress(stream: NodeJS.WriteStream = process.stderr): ExportProgress {
  if (!stream.isTTY) {
    let last = '';
    return {
      update(status) {
        const line = exportProgressLine(status);
        if (line !== last) stream.write(`${line}\n`);
        last = line;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: '{bar} {percentage}% | {state}', hideCursor: true, clearOnComplete: false, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  return {
    update(status) {
      if (stopped) return;
      const value = status.progress ?? 0;
      if (!started) {
        bar.start(100, value, { state: status.status });
        started = true;
      } else bar.update(value, { state: status.status });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (started) bar.stop();
    },
  };
}
