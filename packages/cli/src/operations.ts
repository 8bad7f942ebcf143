import type { Command } from 'commander';
import type { operations } from '@mapi/client';

/** An operation of the API's OpenAPI document, by its operationId; a typo does not compile. */
export type OperationId = keyof operations & string;

/**
 * The operations each command calls. Kept beside the command tree rather than in it, so the test
 * that checks every operation is reachable from some command (test/coverage.test.ts) reads what
 * the commands say they do, hand-written and generated alike.
 */
const covered = new WeakMap<Command, OperationId[]>();

/** Declares that `command` calls these operations; returns the command, so it can wrap a chain. */
export function covers(command: Command, ...operationIds: OperationId[]): Command {
  covered.set(command, [...(covered.get(command) ?? []), ...operationIds]);
  return command;
}

/**
 * `covers` for several commands below `parent` at once, each by its names under it ("list",
 * "tenants list"). A name that matches no command throws when the program is built, so renaming a
 * command cannot silently drop what it covers.
 */
export function coversEach(parent: Command, table: Record<string, OperationId[]>): void {
  for (const [path, operationIds] of Object.entries(table)) {
    let command: Command | undefined = parent;
    for (const name of path.split(' ')) command = command?.commands.find((c) => c.name() === name);
    if (!command) throw new Error(`"${parent.name()} ${path}" is not a command: it cannot cover ${operationIds.join(', ')}.`);
    covers(command, ...operationIds);
  }
}

/** The operations `command` itself declares (not its subcommands'). */
export function coveredBy(command: Command): readonly OperationId[] {
  return covered.get(command) ?? [];
}
