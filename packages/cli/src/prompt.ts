import readline from 'node:readline/promises';
import { EXIT } from './errors.js';

/** Questions on the terminal. Callers check `canPrompt()` first: a script must never hang on a question. */
export function canPrompt(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/** A hidden answer needs stdin to be a terminal; the question itself goes to stderr only when that is one too. */
export function canPromptSecret(): boolean {
  return process.stdin.isTTY === true;
}

/** Asks on stderr, so a prompt never ends up in redirected output. */
export async function ask(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

export async function confirm(question: string): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(`${question} [y/N] `));
}

/**
 * Reads a secret without echoing it: raw mode, one key at a time. Ctrl-C exits like it does
 * everywhere else in the CLI (130); Ctrl-D or Enter ends the input.
 */
export function askSecret(question: string): Promise<string> {
  const input = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve) => {
    let value = '';
    const done = () => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      resolve(value.trim());
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u0003') {
          input.setRawMode(false);
          process.stderr.write('\n');
          process.exit(EXIT.INTERRUPTED);
        }
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
  });
}
