import type { Command } from 'commander';
import { finish } from './context.js';
import { describeError, EXIT, UsageError } from './errors.js';
import { OPERATIONS } from './generated/operations.js';
import { coveredBy, type OperationId } from './operations.js';
import { canPrompt, confirm } from './prompt.js';
import { isDestructive } from './resource/command.js';

/**
 * Commands that change more than they create (deletes, revokes, deactivations) ask before they
 * send anything, on a terminal, unless `--yes` is given; off a terminal they proceed, so scripts
 * never hang on a question (as `gh`, `stripe` and this CLI's own `delete` behave).
 *
 * Generated commands and `mapi delete` ask in their own handlers. Every other command is given
 * the question here, from the operations it declares: a new hand-written command that deletes
 * asks without having to remember to.
 */
export function askBeforeDestructiveCommands(program: Command): void {
  const visit = (command: Command, path: string[]) => {
    for (const child of command.commands) visit(child, [...path, child.name()]);
    if (command === program || command.options.some((option) => option.long === '--yes')) return;
    const destructive = coveredBy(command).filter((id) => isDestructive(id, OPERATIONS[id]));
    if (destructive.length === 0 || !everyOperationDestructive(command, destructive)) return;
    command.option('-y, --yes', 'do not ask for confirmation on a terminal');
    command.addHelpText('after', '\nOn a terminal this asks for confirmation unless --yes is given.\n');
    command.hook('preAction', async (_self, action) => {
      if (action.opts<{ yes?: boolean }>().yes === true || !canPrompt()) return;
      const what = ['mapi', ...path, ...action.args].join(' ');
      if (await confirm(`${what}: ${command.description()}?`)) return;
      process.stderr.write(`${describeError(new UsageError('Nothing changed.')).join('\n')}\n`);
      await finish(EXIT.ERROR);
    });
  };
  visit(program, []);
}

/**
 * A command whose main call is a write that is not destructive (say `model push`, which may
 * delete remote files as part of a commit, or `embed share`, which can also unshare) has its own
 * way of showing what it will do; only commands made for the destructive call ask.
 */
function everyOperationDestructive(command: Command, destructive: OperationId[]): boolean {
  const writes = coveredBy(command).filter((id) => OPERATIONS[id].method !== 'GET');
  return writes.every((id) => destructive.includes(id));
}
