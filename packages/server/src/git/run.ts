import { spawn } from 'node:child_process';

/** A git command that exited with a status its caller did not expect. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (${exitCode ?? 'killed'}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
    this.name = 'GitError';
  }
}

/**
 * The environment every git command runs in. Nothing from the server's own environment or the
 * machine's git configuration may change what a repository command does: no system or user
 * config (a `core.hooksPath` or `url.insteadOf` there would redirect us), no prompts, no pager,
 * stable C-locale messages that callers may match.
 */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
    ...extra,
  };
}

export interface GitCommand {
  /** The bare repository; absent for commands that need none (check-ref-format). */
  gitDir?: string;
  args: string[];
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit statuses that are answers rather than failures (merge-tree's 1 means "conflicts"). */
  okCodes?: number[];
  /** Kills the command after this long (commands that talk to other servers); it then fails as killed. */
  timeoutMs?: number;
}

export interface GitResult {
  stdout: Buffer;
  code: number;
}

/** Runs one git command to completion and returns its output; any other exit status throws GitError. */
export function runGit(command: GitCommand): Promise<GitResult> {
  const args = command.gitDir === undefined ? command.args : [`--git-dir=${command.gitDir}`, ...command.args];
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: gitEnvironment(command.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = command.timeoutMs === undefined ? null : setTimeout(() => child.kill('SIGKILL'), command.timeoutMs);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    // A command that exits before reading all its input closes the pipe; its status tells.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      const ok = code !== null && (code === 0 || (command.okCodes?.includes(code) ?? false));
      if (ok) resolve({ stdout: Buffer.concat(out), code });
      else reject(new GitError(command.args, code, Buffer.concat(err).toString('utf8')));
    });
    child.stdin.end(command.input ?? '');
  });
}

/** The command's output as text, without its final newline. */
export async function gitText(command: GitCommand): Promise<string> {
  return (await runGit(command)).stdout.toString('utf8').replace(/\n$/, '');
}
