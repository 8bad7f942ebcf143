import type { Command } from 'commander';
import type { CreateScheduledTaskInput, ScheduledTask, ScheduledTaskRun, UpdateScheduledTaskInput } from '@mapi/client';
import { run, type Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readFields } from '../input-file.js';
import { parseId } from '../items.js';
import { all, note, shortDate, writeJson, writeTable, type Column } from '../output.js';
import { resolveAgent } from './agents.js';
import { coversEach } from '../operations.js';

const HELP = `
A scheduled task asks an agent a prompt on a schedule and keeps the answers as runs. --cron is five
fields (minute hour day-of-month month day-of-week) and may fire at most hourly, so its minute is
one value: "0 * * * *" and "30 7 * * 1-5" are fine, "*/5 * * * *" is not. --timezone is an IANA
zone (default UTC). You see and change your own tasks (an admin: everyone's); at most 20 of yours
may be active at once. create and update also take the fields from --file (JSON or YAML; - reads
stdin): {agentId, prompt, cron, timezone, active}; flags win over the file.

Examples:
  $ mapi tasks create 3 --agent 7 --prompt "Summarise yesterday's orders" --cron "30 7 * * 1-5" --timezone Europe/Berlin
  $ mapi tasks list 3
  $ mapi tasks run 3 12
  $ mapi tasks runs 3 12
  $ mapi tasks update 3 12 --inactive
`;

const COLUMNS: Column<ScheduledTask>[] = [
  { header: 'ID', value: (t) => t.id, align: 'right' },
  { header: 'AGENT', value: (t) => t.agentId, align: 'right' },
  { header: 'ACTIVE', value: (t) => (t.active ? 'yes' : 'no') },
  { header: 'CRON', value: (t) => t.cron },
  { header: 'TIMEZONE', value: (t) => t.timezone },
  { header: 'NEXT RUN (UTC)', value: (t) => shortDate(t.nextRunAt) },
  { header: 'OWNER', value: (t) => t.owner?.email },
  { header: 'PROMPT', value: (t) => (t.prompt.length > 60 ? `${t.prompt.slice(0, 59)}…` : t.prompt) },
];

const RUN_COLUMNS: Column<ScheduledTaskRun>[] = [
  { header: 'ID', value: (r) => r.id, align: 'right' },
  { header: 'TRIGGER', value: (r) => r.trigger },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'CREATED (UTC)', value: (r) => shortDate(r.createdAt) },
  { header: 'FINISHED (UTC)', value: (r) => shortDate(r.finishedAt) },
  { header: 'JOB', value: (r) => r.jobId, align: 'right' },
  { header: 'THREAD', value: (r) => r.threadId },
  { header: 'RESULT', value: (r) => oneLine(r.error ?? r.answer) },
];

function oneLine(text: string | null): string | null {
  if (text === null) return null;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

interface TaskFlags {
  file?: string;
  agent?: string;
  prompt?: string;
  cron?: string;
  timezone?: string;
  active?: boolean;
  inactive?: boolean;
}

function withTaskFlags(command: Command): Command {
  return command
    .option('--file <file>', 'the fields as JSON or YAML (- reads stdin); flags win over it')
    .option('--prompt <text>', 'what the agent is asked at each run')
    .option('--cron <expression>', 'five fields, at most hourly, e.g. "30 7 * * 1-5"')
    .option('--timezone <zone>', 'IANA time zone of the schedule, e.g. Europe/Berlin (default UTC)')
    .option('--active', 'switch the task on (counts against your 20 active tasks)')
    .option('--inactive', 'switch the task off: it keeps its runs but no longer fires');
}

function taskFields(options: TaskFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = options.file !== undefined ? readFields(options.file) : {};
  if (options.prompt !== undefined) fields.prompt = options.prompt;
  if (options.cron !== undefined) fields.cron = options.cron;
  if (options.timezone !== undefined) fields.timezone = options.timezone;
  if (options.active && options.inactive) throw new UsageError('Give --active or --inactive, not both.');
  if (options.active) fields.active = true;
  if (options.inactive) fields.active = false;
  return fields;
}

function show(context: Context, task: ScheduledTask, what: string): void {
  if (context.json) return writeJson(task);
  note(`${what} task ${task.id}${task.active ? `; next run ${shortDate(task.nextRunAt)} UTC` : ' (inactive)'}.`);
  writeTable(COLUMNS, [task], '');
}

export function registerTasks(program: Command): void {
  const group = program.command('tasks').description('Scheduled agent tasks: an agent asked a prompt on a schedule, and the runs');
  group.addHelpText('after', HELP);

  group
    .command('list <deploymentId>')
    .alias('ls')
    .description('List your scheduled tasks (an admin: everyone’s), newest first')
    .addHelpText('after', '\nExamples:\n  $ mapi tasks list 3\n')
    .action(
      run(async (context, deploymentArg: string) => {
        const rows = await all(context.client().scheduledTasks.list(parseId(deploymentArg, 'deploymentId')));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No scheduled tasks.');
      }),
    );

  group
    .command('get <deploymentId> <taskId>')
    .description('Show a scheduled task')
    .addHelpText('after', '\nExamples:\n  $ mapi tasks get 3 12 --json\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const task = await context.client().scheduledTasks.get(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'taskId'));
        if (context.json) writeJson(task);
        else writeTable(COLUMNS, [task], '');
      }),
    );

  withTaskFlags(group.command('create <deploymentId>'))
    .option('--agent <id>', "the agent to ask (default: the deployment's only agent)")
    .description('Schedule a prompt for an agent (active unless --inactive)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi tasks create 3 --agent 7 --prompt "Summarise yesterday" --cron "0 7 * * *"\n  $ mapi tasks create 3 --file weekly-task.yaml\n',
    )
    .action(
      run(async (context, deploymentArg: string, options: TaskFlags) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const fields = taskFields(options);
        if (typeof fields.prompt !== 'string') throw new UsageError('A task needs --prompt (or prompt in --file).');
        if (typeof fields.cron !== 'string') throw new UsageError('A task needs --cron, e.g. --cron "0 7 * * *" (or cron in --file).');
        if (options.agent !== undefined || typeof fields.agentId !== 'number')
          fields.agentId = (await resolveAgent(context.client(), deploymentId, options.agent)).id;
        show(context, await context.client().scheduledTasks.create(deploymentId, fields as CreateScheduledTaskInput), 'Created');
      }),
    );

  withTaskFlags(group.command('update <deploymentId> <taskId>'))
    .description('Change a scheduled task: only the fields given change')
    .addHelpText('after', '\nExamples:\n  $ mapi tasks update 3 12 --cron "0 8 * * 1-5"\n  $ mapi tasks update 3 12 --inactive\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string, options: TaskFlags) => {
        const fields = taskFields(options);
        if (Object.keys(fields).length === 0) throw new UsageError('Nothing to change: give the fields with flags or --file.');
        const task = await context
          .client()
          .scheduledTasks.update(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'taskId'), fields as UpdateScheduledTaskInput);
        show(context, task, 'Updated');
      }),
    );

  group
    .command('delete <deploymentId> <taskId>')
    .alias('rm')
    .description('Delete a scheduled task with its runs')
    .addHelpText('after', '\nExamples:\n  $ mapi tasks delete 3 12\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const taskId = parseId(idArg, 'taskId');
        await context.client().scheduledTasks.delete(parseId(deploymentArg, 'deploymentId'), taskId);
        if (context.json) writeJson({ deleted: taskId });
        else note(`Deleted task ${taskId} with its runs.`);
      }),
    );

  group
    .command('run <deploymentId> <taskId>')
    .description('Run a task now; `mapi tasks runs` shows how it went')
    .addHelpText('after', '\nExamples:\n  $ mapi tasks run 3 12\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const taskId = parseId(idArg, 'taskId');
        const queued = await context.client().scheduledTasks.run(deploymentId, taskId);
        if (context.json) writeJson(queued);
        else note(`Queued run ${queued.id} of task ${taskId} (job ${queued.jobId ?? '-'}); \`mapi tasks runs ${deploymentId} ${taskId}\` shows how it went.`);
      }),
    );

  group
    .command('runs <deploymentId> <taskId>')
    .description("A task's runs, newest first (the 50 most recent are kept)")
    .addHelpText('after', '\nExamples:\n  $ mapi tasks runs 3 12\n  $ mapi tasks runs 3 12 --json   # whole answers and errors\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const rows = await context.client().scheduledTasks.runs(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'taskId'));
        if (context.json) writeJson(rows);
        else writeTable(RUN_COLUMNS, rows, 'No runs yet.');
      }),
    );
  coversEach(group, {
    list: ['listScheduledTasks'],
    get: ['getScheduledTask'],
    create: ['createScheduledTask'],
    update: ['updateScheduledTask'],
    delete: ['deleteScheduledTask'],
    run: ['runScheduledTask'],
    runs: ['listScheduledTaskRuns'],
  });
}
