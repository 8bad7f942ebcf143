import type { Command } from 'commander';

/** One option as a completion offers it. */
export interface CompletionOption {
  long?: string;
  short?: string;
  /** The next word is the option's value (`--url <url>`), not a command or another option. */
  takesValue: boolean;
  description: string;
}

/** One command of the tree: its words from the top (`['model', 'clone']`), its subcommands and options. */
export interface CompletionNode {
  path: string[];
  description: string;
  commands: { name: string; description: string }[];
  /** The command's own options, then the program's (commander reads those after any subcommand too), then --help. */
  options: CompletionOption[];
}

function optionsOf(command: Command): CompletionOption[] {
  return command.options
    .filter((option) => !option.hidden)
    .map((option) => ({
      ...(option.long ? { long: option.long } : {}),
      ...(option.short ? { short: option.short } : {}),
      takesValue: option.required || option.optional,
      description: option.description,
    }));
}

const HELP_OPTION: CompletionOption = { long: '--help', short: '-h', takesValue: false, description: 'display help for command' };

/**
 * Walks the program as it is built at run time, so a command added anywhere is completed without
 * touching the completion code. Hidden commands and options are left out, as help leaves them out.
 */
export function completionTree(program: Command): CompletionNode[] {
  const globals = optionsOf(program);
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string[]) => {
    const visible = command.commands.filter((child) => !(child as unknown as { _hidden?: boolean })._hidden);
    nodes.push({
      path,
      description: command.description(),
      commands: visible.flatMap((child) => [child.name(), ...child.aliases()].map((name) => ({ name, description: child.description() }))),
      options: [...(path.length === 0 ? [] : optionsOf(command)), ...globals, HELP_OPTION],
    });
    for (const child of visible) visit(child, [...path, child.name()]);
  };
  visit(program, []);
  return nodes;
}

/** Every spelling of an option: --long and -s. */
export function spellings(option: CompletionOption): string[] {
  return [option.long, option.short].filter((s): s is string => s !== undefined);
}
