import { once } from 'node:events';
import type { Command } from 'commander';
import type { DeploymentLogLine, LogFilter, LogSource } from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { note } from '../output.js';
import { coversEach } from '../operations.js';

/** The most lines the server answers at once, and so the longest tail. */
export const MAX_LINES = 200;
const DEFAULT_LINES = 100;
const SOURCES: readonly LogSource[] = ['production', 'dev'];

const HELP = `
Lines print as "<date> <pod> <message>", oldest first; with --json, one JSON object per line
({"pod", "date", "message"}), also while following. Without --source, every pod's lines, merged
in time order. Only the newest ${MAX_LINES} lines can be shown at once; the server keeps the newest
10,000 per deployment, across restarts. --follow asks for new lines every second until Ctrl-C
(or SIGTERM), which ends it with exit code 0.

Examples:
  $ mapi logs 3
  $ mapi logs 3 --source dev --lines 20
  $ mapi logs 3 --pod production-x7k2p --follow
  $ mapi logs 3 --follow --json | jq -r .message
`;

interface LogsOptions {
  source?: string;
  pod?: string;
  lines?: string;
  follow?: boolean;
}

export function parseLines(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LINES;
  const lines = Number(value);
  if (!/^\d+$/.test(value.trim()) || lines < 1 || lines > MAX_LINES)
    throw new UsageError(`--lines must be a whole number from 1 to ${MAX_LINES}, got "${value}".`);
  return lines;
}

export function parseSource(value: string | undefined): LogSource | undefined {
  if (value === undefined) return undefined;
  const source = SOURCES.find((s) => s === value);
  if (source === undefined)
    throw new UsageError(
      `--source must be "production" or "dev", got "${value}".`,
      '"production" is the production pod; "dev" is staging branches and developers in dev mode.',
    );
  return source;
}

/** One line as `mapi logs` prints it: date, pod and message; with --json, the line's JSON. */
export function formatLine(line: DeploymentLogLine, json: boolean): string {
  return json ? JSON.stringify({ pod: line.pod, date: line.date, message: line.message }) : `${line.date} ${line.pod} ${line.message}`;
}

/** Writes, waiting when the reader is slower than the log (a pipe into a pager or a slow consumer). */
async function print(text: string): Promise<void> {
  if (!process.stdout.write(`${text}\n`)) await once(process.stdout, 'drain');
}

/** Ctrl-C or SIGTERM ends a follow: the poll in flight is cancelled, and the command exits 0. A second one quits at once. */
function stopOnSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(name === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export function registerLogs(program: Command): void {
  program
    .command('logs')
    .argument('<deploymentId>', 'deployment id')
    .option('--source <source>', '"production" (the production pod) or "dev" (staging and dev-mode pods); default: all')
    .option('--pod <name>', "one pod's lines (names as `mapi pods` shows them)")
    .option('--lines <n>', `how many of the newest lines, 1 to ${MAX_LINES}`, String(DEFAULT_LINES))
    .option('-f, --follow', 'keep printing new lines as they are written, until Ctrl-C')
    .description("A deployment's runtime logs: the newest lines, or followed as they are written")
    .addHelpText('after', HELP)
    .action(
      run(async (context, deploymentArg: string, options: LogsOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const first = parseLines(options.lines);
        const source = parseSource(options.source);
        if (options.pod !== undefined && options.pod.trim() === '')
          throw new UsageError('--pod needs a pod name, such as production-x7k2p (`mapi pods` lists them).');
        const filter: LogFilter = { ...(source !== undefined ? { source } : {}), ...(options.pod !== undefined ? { pod: options.pod } : {}) };
        const client = context.client();
        if (!options.follow) {
          const lines = await client.logs.tail(deploymentId, { ...filter, first });
          for (const line of lines) await print(formatLine(line, context.json));
          if (lines.length === 0 && !context.json) note(`No log lines${source || options.pod ? ' match' : ` for deployment ${deploymentId}`} yet.`);
          return;
        }
        const stop = stopOnSignal();
        try {
          for await (const line of client.logs.follow(deploymentId, { ...filter, first, signal: stop.signal })) await print(formatLine(line, context.json));
        } finally {
          stop.dispose();
        }
      }),
    );
  coversEach(program, { logs: ['listRuntimeLogs'] });
}
