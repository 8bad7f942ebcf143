import { spellings, type CompletionNode } from './completion-tree.js';

/**
 * The completion scripts. Each finds the command path the same way: the words typed so far, minus
 * options and the values of options that take one, each word kept when it is a subcommand of the
 * path before it. Then it offers that command's subcommands, or its options after a `-`.
 */

const key = (node: CompletionNode) => node.path.join(' ');

/** A POSIX single-quoted word: bash and zsh read it the same way. */
function sq(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** fish's single quotes escape \ and ' with a backslash. */
function fq(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A `case` over command paths printing a word list, for bash (zsh gets `reply` arrays instead). */
function bashCase(name: string, nodes: CompletionNode[], words: (node: CompletionNode) => string[]): string {
  const arms = nodes.map((node) => `    ${sq(key(node))}) echo ${sq(words(node).join(' '))} ;;`);
  return `${name}() {\n  case "$1" in\n${arms.join('\n')}\n  esac\n}`;
}

const valued = (node: CompletionNode) => node.options.filter((o) => o.takesValue).flatMap(spellings);

export function bashScript(nodes: CompletionNode[]): string {
  return `# mapi completion for bash: source this file, or save it as
# ~/.local/share/bash-completion/completions/mapi (bash-completion loads it on first use).
${bashCase('_mapi_commands', nodes, (node) => node.commands.map((c) => c.name))}
${bashCase('_mapi_options', nodes, (node) => node.options.flatMap(spellings))}
${bashCase('_mapi_valued', nodes, valued)}
_mapi() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" word i skip=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    if [[ "$word" == -* ]]; then
      [[ "$word" != *=* && " $(_mapi_valued "$cmdpath") " == *" $word "* ]] && skip=1
      continue
    fi
    if [[ " $(_mapi_commands "$cmdpath") " == *" $word "* ]]; then cmdpath="\${cmdpath:+$cmdpath }$word"; fi
  done
  # An option's value, or an argument: left to the default (file names).
  ((skip)) && return 0
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_mapi_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_mapi_commands "$cmdpath")" -- "$cur"))
  fi
}
complete -o default -F _mapi mapi
`;
}

/** name:description pairs, as zsh's _describe reads them (a colon in the name is escaped). */
function described(name: string, description: string): string {
  return sq(`${name.replace(/:/g, '\\:')}:${oneLine(description)}`);
}

function zshCase(name: string, nodes: CompletionNode[], words: (node: CompletionNode) => string[]): string {
  const arms = nodes.map((node) => `    ${sq(key(node))}) reply=(${words(node).join(' ')}) ;;`);
  return `${name}() {\n  reply=()\n  case "$1" in\n${arms.join('\n')}\n  esac\n}`;
}

export function zshScript(nodes: CompletionNode[]): string {
  return `#compdef mapi
# mapi completion for zsh: save as _mapi in a directory on $fpath (before compinit runs),
# or source it after compinit.
${zshCase('_mapi_commands', nodes, (node) => node.commands.map((c) => described(c.name, c.description)))}
${zshCase('_mapi_options', nodes, (node) => node.options.flatMap((o) => spellings(o).map((s) => described(s, o.description))))}
${zshCase('_mapi_valued', nodes, (node) => valued(node).map(sq))}
_mapi() {
  local cmdpath="" word i skip=0
  local -a reply names
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    if ((skip)); then skip=0; continue; fi
    if [[ "$word" == -* ]]; then
      _mapi_valued "$cmdpath"
      [[ "$word" != *=* ]] && ((\${reply[(Ie)$word]})) && skip=1
      continue
    fi
    _mapi_commands "$cmdpath"
    names=(\${reply%%:*})
    ((\${names[(Ie)$word]})) && cmdpath="\${cmdpath:+$cmdpath }$word"
  done
  if ((skip)); then _files; return; fi
  if [[ "\${words[CURRENT]}" == -* ]]; then
    _mapi_options "$cmdpath"
    _describe -t options 'mapi option' reply
  else
    _mapi_commands "$cmdpath"
    if ((\${#reply})); then _describe -t commands 'mapi command' reply; else _files; fi
  fi
}
if [[ "\${funcstack[1]}" == _mapi ]]; then _mapi "$@"; else compdef _mapi mapi; fi
`;
}

function fishSwitch(name: string, nodes: CompletionNode[], words: (node: CompletionNode) => string[]): string {
  const arms = nodes.map((node) => `    case ${fq(key(node))}\n        printf '%s\\n' ${words(node).map(fq).join(' ')}`);
  return `function ${name}\n    switch "$argv[1]"\n${arms.join('\n')}\n    end\nend`;
}

export function fishScript(nodes: CompletionNode[]): string {
  const lines: string[] = [];
  for (const node of nodes) {
    const at = `-n ${fq(`__mapi_at ${sq(key(node))}`)}`;
    for (const command of node.commands) lines.push(`complete -c mapi ${at} -f -a ${fq(command.name)} -d ${fq(oneLine(command.description))}`);
    for (const option of node.options) {
      const flags = [option.short ? `-s ${option.short.slice(1)}` : '', option.long ? `-l ${option.long.slice(2)}` : '', option.takesValue ? '-r' : '']
        .filter(Boolean)
        .join(' ');
      lines.push(`complete -c mapi ${at} ${flags} -d ${fq(oneLine(option.description))}`);
    }
  }
  return `# mapi completion for fish: save as ~/.config/fish/completions/mapi.fish
${fishSwitch('__mapi_commands', nodes, (node) => node.commands.map((c) => c.name))}
${fishSwitch('__mapi_valued', nodes, valued)}
function __mapi_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmdpath
    set -l skip 0
    for word in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            if not string match -q -- '*=*' $word; and contains -- $word (__mapi_valued "$cmdpath")
                set skip 1
            end
            continue
        end
        if contains -- $word (__mapi_commands "$cmdpath")
            set cmdpath (string join ' ' $cmdpath $word)
        end
    end
    echo $cmdpath
end
function __mapi_at
    set -l at (__mapi_path)
    test "$at" = "$argv[1]"
end
${lines.join('\n')}
`;
}
