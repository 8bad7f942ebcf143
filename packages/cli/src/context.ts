import type { Command } from 'commander';
import type { MapiClient } from '@mapi/client';
import { connect, errorContext, resolveConfig, type GlobalFlags, type ResolvedConfig } from './config.js';
import { describeError, EXIT } from './errors.js';

/** What every command handler gets: the global flags, and the configuration and client on demand. */
export interface Context {
  flags: GlobalFlags;
  json: boolean;
  /** Resolved lazily: `--dry-run` and `--help` must work without a profile, URL or token. */
  config(): ResolvedConfig;
  client(): MapiClient;
}

function contextFor(command: Command): Context {
  const flags = command.optsWithGlobals<GlobalFlags>();
  let config: ResolvedConfig | undefined;
  let client: MapiClient | undefined;
  const context: Context = {
    flags,
    json: flags.json === true,
    config: () => (config ??= resolveConfig(flags)),
    client: () => (client ??= connect(context.config())),
  };
  return context;
}

/** Waits until stdout and stderr have taken everything written, then exits with `code`. */
export async function finish(code: number): Promise<never> {
  // process.exit right after a write can cut off piped output on platforms where pipes are asynchronous;
  // exiting explicitly (rather than letting the loop drain) stops pooled keep-alive sockets from delaying the exit.
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
  process.exit(code);
}

type Handler = (context: Context, ...args: any[]) => Promise<number | void>;

/**
 * Wraps a command handler: builds its context, prints any error with its hint, and exits with the
 * handler's code (0 when it returns nothing, 1 on an error).
 */
export function run(handler: Handler): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const context = contextFor(command);
    let code: number;
    try {
      code = (await handler(context, ...args.slice(0, -1))) ?? EXIT.OK;
    } catch (error) {
      let errorCtx = {};
      try {
        errorCtx = errorContext(context.config());
      } catch {
        // The configuration itself was the problem; the error says so without its context.
      }
      process.stderr.write(`${describeError(error, errorCtx).join('\n')}\n`);
      code = EXIT.ERROR;
    }
    await finish(code);
  };
}
