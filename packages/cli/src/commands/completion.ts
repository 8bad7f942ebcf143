import type { Command } from 'commander';
import { bashScript, fishScript, zshScript } from '../completion-scripts.js';
import { completionTree } from '../completion-tree.js';
import { EXIT, UsageError } from '../errors.js';
import { run } from '../context.js';

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

const HELP = `
Prints a script that completes mapi's commands, subcommands and options in your shell. It is made
from the commands this version has, so print it again after an upgrade. Install it once:

  bash  mapi completion bash > ~/.local/share/bash-completion/completions/mapi
        (or add \`source <(mapi completion bash)\` to ~/.bashrc)
  zsh   mapi completion zsh > "\${fpath[1]}/_mapi"   (a directory on $fpath, before compinit)
        (or add \`source <(mapi completion zsh)\` to ~/.zshrc, after compinit)
  fish  mapi completion fish > ~/.config/fish/completions/mapi.fish

Exit codes: 0 printed, 1 an unknown shell.

Examples:
  $ mapi completion bash > ~/.local/share/bash-completion/completions/mapi
  $ mapi completion zsh > ~/.zfunc/_mapi
  $ mapi completion fish > ~/.config/fish/completions/mapi.fish
`;

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('Print a shell completion script for bash, zsh or fish')
    .addHelpText('after', HELP)
    .action(
      run(async (_context, shell: string) => {
        const script = SHELLS[shell as keyof typeof SHELLS];
        if (!script) throw new UsageError(`No completion for "${shell}".`, 'Name one of: bash, zsh, fish.');
        process.stdout.write(script(completionTree(program)));
        return EXIT.OK;
      }),
    );
}
