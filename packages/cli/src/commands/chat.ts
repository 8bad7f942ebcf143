import readline from 'node:readline';
import type { Command } from 'commander';
import { ApiError, type ChatEvent, type ChatStep, type MapiClient } from '@mapi/client';
import { run, type Context } from '../context.js';
import { describeError, EXIT, UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { formatTable } from '../output.js';
import { shellArg } from '../shell.js';
import { resolveAgent } from './agents.js';
import { coversEach } from '../operations.js';

const HELP = `
Asks an agent about the deployment's data. The answer's text streams to stdout as it is written;
what the agent does on the way (the members it looked at, the query it ran, the rows it got, a
chart, a tool call that was refused) shows on stderr, so \`> answer.txt\` keeps only the answer.
With a question argument, one answer; without one, each line of stdin is a question (a prompt on a
terminal), all in one thread, until end of input (Ctrl-D) or Ctrl-C. --thread continues an earlier
thread. --json prints every event as one JSON line: {"event": "...", "data": {...}}.

Without --agent, the deployment's only agent answers; with several, pick one (\`mapi agents list\`).

Exit codes: 0 answered; 1 a problem (AI off or not allowed for this key: 403; the monthly budget
used up: 429; the model provider failing: 502; no provider: 503); 130 Ctrl-C.

Examples:
  $ mapi chat 3 "How many orders last week?"
  $ mapi chat 3 --agent 7
  $ mapi chat 3 --thread th_Xk2f9aQ "And the week before?"
  $ mapi chat 3 "Revenue by month" --json | jq -c 'select(.event == "step")'
`;

/** Rows of a rows step shown on a terminal; the rest are counted, not printed. */
const MAX_ROWS = 10;
/** Widest cell of a rows step: a long text would push the other columns off the screen. */
const MAX_CELL = 40;

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return truncate(typeof value === 'object' ? JSON.stringify(value) : String(value), MAX_CELL);
}

/** A rows step as a table of at most MAX_ROWS rows, and a line saying how many there were. */
export function rowsTable(step: Extract<ChatStep, { kind: 'rows' }>): string {
  const shown = step.rows.slice(0, MAX_ROWS);
  const columns = step.columns.map((name) => ({ header: truncate(name, MAX_CELL), value: (row: Record<string, unknown>) => cellText(row[name]) }));
  let text = shown.length > 0 ? formatTable(columns, shown) : '(no rows)\n';
  if (step.total > shown.length || step.truncated) text += `… ${shown.length} of ${step.total.toLocaleString('en-US')} rows shown\n`;
  return text;
}

/** A query in one line: its members and limits, as Cube queries spell them; other shapes as compact JSON. */
export function queryLine(query: Record<string, unknown>): string {
  const list = (key: string) => (Array.isArray(query[key]) ? (query[key] as unknown[]) : []);
  const parts: string[] = [];
  if (list('measures').length) parts.push(`measures ${list('measures').join(', ')}`);
  if (list('dimensions').length) parts.push(`by ${list('dimensions').join(', ')}`);
  for (const t of list('timeDimensions') as Array<{ dimension?: string; granularity?: string; dateRange?: unknown }>) {
    if (!t || typeof t !== 'object') continue;
    const range = Array.isArray(t.dateRange) ? t.dateRange.join('..') : typeof t.dateRange === 'string' ? t.dateRange : undefined;
    parts.push(`${t.dimension ?? 'time'}${t.granularity ? ` by ${t.granularity}` : ''}${range ? ` in ${range}` : ''}`);
  }
  if (list('filters').length) parts.push(`${list('filters').length} filter${list('filters').length === 1 ? '' : 's'}`);
  if (query.order !== undefined) parts.push(`order ${typeof query.order === 'object' ? JSON.stringify(query.order) : String(query.order)}`);
  if (typeof query.limit === 'number') parts.push(`limit ${query.limit}`);
  return truncate(parts.length > 0 ? parts.join('; ') : JSON.stringify(query), 200);
}

/** A chart in one line: its mark and what its axes show (a Vega-Lite spec); the spec itself is in --json. */
export function chartLine(spec: Record<string, unknown>): string {
  const mark = typeof spec.mark === 'string' ? spec.mark : ((spec.mark as { type?: string } | undefined)?.type ?? 'chart');
  const encoding = (spec.encoding ?? {}) as Record<string, { field?: string } | undefined>;
  const y = encoding.y?.field ?? encoding.theta?.field;
  const x = encoding.x?.field ?? encoding.color?.field;
  const title = typeof spec.title === 'string' ? `"${spec.title}": ` : '';
  return `${title}${mark}${y ? ` of ${y}` : ''}${x ? ` by ${x}` : ''} (the spec is in --json)`;
}

/** Prints one answer's events for a person: text on stdout as it comes, steps on stderr between. */
class Terminal {
  /** stdout holds part of a line of the answer: a step printed now starts on a line of its own. */
  private midLine = false;

  text(delta: string): void {
    if (delta === '') return;
    process.stdout.write(delta);
    this.midLine = !delta.endsWith('\n');
  }

  endLine(): void {
    if (this.midLine) process.stdout.write('\n');
    this.midLine = false;
  }

  step(step: ChatStep): void {
    this.endLine();
    switch (step.kind) {
      case 'members':
        process.stderr.write(`· members: ${truncate(step.members.map((m) => m.name).join(', '), 200)}\n`);
        break;
      case 'query':
        process.stderr.write(`· query: ${queryLine(step.query)}\n`);
        break;
      case 'rows':
        process.stderr.write(rowsTable(step).replace(/^/gm, '  ').replace(/ +$/gm, ''));
        break;
      case 'chart':
        process.stderr.write(`· chart: ${chartLine(step.spec)}\n`);
        break;
      case 'refused':
        process.stderr.write(`· refused ${step.tool}: ${step.detail}\n`);
        break;
      case 'saved':
        process.stderr.write(`· saved ${step.what === 'report' ? 'report' : 'dashboard draft of workbook'} ${step.id}: ${truncate(step.name, 200)}\n`);
        break;
    }
  }
}

interface ChatOptions {
  agent?: string;
  thread?: string;
}

interface Session {
  context: Context;
  client: MapiClient;
  deploymentId: number;
  agentId: number;
  threadId: string | undefined;
  signal: AbortSignal;
}

/**
 * Asks one question and prints the answer; true when it was answered. A problem (before the
 * stream, or its error event) is printed with its hint, as any command's error is.
 */
async function ask(session: Session, question: string): Promise<boolean> {
  const terminal = new Terminal();
  const { context } = session;
  try {
    const events = session.client.chat(session.deploymentId, session.agentId, question, {
      ...(session.threadId !== undefined ? { threadId: session.threadId } : {}),
      signal: session.signal,
    });
    for await (const event of events) {
      if (context.json) process.stdout.write(`${JSON.stringify(event)}\n`);
      if (event.event === 'thread') session.threadId = event.data.threadId;
      if (event.event === 'error') {
        if (!context.json) terminal.endLine();
        report(session, new ApiError({ status: event.data.status, method: 'POST', url: chatUrl(session), problem: event.data }));
        return false;
      }
      if (context.json) continue;
      render(terminal, event);
    }
    return true;
  } catch (error) {
    terminal.endLine();
    if (session.signal.aborted) throw error;
    report(session, error);
    return false;
  }
}

function render(terminal: Terminal, event: ChatEvent): void {
  if (event.event === 'text') terminal.text(event.data.delta);
  else if (event.event === 'step') terminal.step(event.data);
  else if (event.event === 'done') {
    terminal.endLine();
    const { promptTokens, completionTokens } = event.data.usage;
    process.stderr.write(`· ${promptTokens + completionTokens} tokens (${promptTokens} prompt, ${completionTokens} completion)\n`);
  }
}

/** The URL a problem was about, so the hints in errors.ts can tell an answer's problem from others. */
function chatUrl(session: Session): string {
  const base = `${session.context.config().url}/api/v1/deployments/${session.deploymentId}/agents/${session.agentId}/threads`;
  return session.threadId === undefined ? base : `${base}/${session.threadId}/messages`;
}

function report(session: Session, error: unknown): void {
  let where = {};
  try {
    where = { url: session.context.config().url };
  } catch {
    // Only the hint's wording depends on it.
  }
  process.stderr.write(`${describeError(error, where).join('\n')}\n`);
}

/** Lines of stdin, one at a time, with a prompt when a person types them. */
function questions(interactive: boolean): { next(): Promise<string | undefined>; close(): void } {
  const rl = readline.createInterface({ input: process.stdin, output: interactive ? process.stderr : undefined, terminal: interactive });
  const lines: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let closed = false;
  rl.on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else lines.push(line);
  });
  rl.on('close', () => {
    closed = true;
    for (const waiter of waiting.splice(0)) waiter(undefined);
  });
  // readline takes Ctrl-C from the terminal in raw mode; it means the same here as anywhere in the CLI.
  rl.on('SIGINT', () => process.emit('SIGINT'));
  return {
    next() {
      if (lines.length > 0) return Promise.resolve(lines.shift());
      if (closed) return Promise.resolve(undefined);
      if (interactive) rl.prompt();
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => rl.close(),
  };
}

export function registerChat(program: Command): void {
  program
    .command('chat <deploymentId> [question...]')
    .option('--agent <id>', "the agent to ask (default: the deployment's only agent)")
    .option('--thread <id>', 'continue this thread (its id is printed when an answer starts a thread)')
    .description('Ask an agent about the data: the answer streams as it is written; no question reads them line by line')
    .addHelpText('after', HELP)
    .action(
      run(async (context, deploymentArg: string, words: string[], options: ChatOptions) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const client = context.client();
        const agentId =
          options.agent === undefined && options.thread !== undefined
            ? (await client.agents.thread(deploymentId, options.thread)).agentId
            : (await resolveAgent(client, deploymentId, options.agent)).id;
        const controller = new AbortController();
        const session: Session = { context, client, deploymentId, agentId, threadId: options.thread, signal: controller.signal };
        let interrupted = false;
        let input: ReturnType<typeof questions> | undefined;
        process.on('SIGINT', () => {
          interrupted = true;
          controller.abort();
          // Ends a wait for the next line too.
          input?.close();
          process.stderr.write('\n');
        });
        const resume = () =>
          session.threadId === undefined ? undefined : `mapi chat ${deploymentId} --agent ${agentId} --thread ${shellArg(session.threadId)}`;
        const onInterrupt = (): number => {
          const again = resume();
          if (again && !context.json) process.stderr.write(`Continue with: ${again}\n`);
          return EXIT.INTERRUPTED;
        };

        const question = words.join(' ').trim();
        if (question !== '') {
          try {
            const ok = await ask(session, question);
            if (!context.json && ok && options.thread === undefined && session.threadId !== undefined) process.stderr.write(`Continue with: ${resume()} "…"\n`);
            return ok ? EXIT.OK : EXIT.ERROR;
          } catch (error) {
            if (interrupted) return onInterrupt();
            throw error;
          }
        }
        if (words.length > 0) throw new UsageError('The question is empty.');

        const interactive = process.stdin.isTTY === true && !context.json;
        const lines = (input = questions(interactive));
        if (interactive) {
          const agent = await client.agents.get(deploymentId, agentId);
          process.stderr.write(`Asking ${agent.name} (agent ${agentId}) in deployment ${deploymentId}; one question a line, Ctrl-D or Ctrl-C ends.\n`);
        }
        let failed = false;
        try {
          for (let line = await lines.next(); line !== undefined && !interrupted; line = await lines.next()) {
            const text = line.trim();
            if (text === '') continue;
            if (!(await ask(session, text))) failed = true;
          }
        } catch (error) {
          if (!interrupted) throw error;
        } finally {
          lines.close();
        }
        if (interrupted) return onInterrupt();
        if (interactive) {
          // Ctrl-D leaves the cursor after the prompt.
          process.stderr.write('\n');
          const again = resume();
          if (again) process.stderr.write(`Continue with: ${again}\n`);
        }
        return failed ? EXIT.ERROR : EXIT.OK;
      }),
    );
  coversEach(program, { chat: ['listAgents', 'getAgent', 'askAgent', 'continueAgentThread', 'getAgentThread'] });
}
