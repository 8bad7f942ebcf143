import fs from 'node:fs';
import type { Command } from 'commander';
import type { Agent, AgentSuggestion, CreateAgentInput, MapiClient, UpdateAgentInput } from '@mapi/client';
import { run, type Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readFields } from '../input-file.js';
import { parseId } from '../items.js';
import { all, note, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const HELP = `
An agent answers questions about a deployment's data model: its instructions are what it is told
before every chat, its members the cubes and views it may use (none given: every member the asker
can see), its starter prompts the suggestions shown before a chat starts. Reading needs VIEW on the
deployment; creating, changing and deleting need EDIT and the role DEVELOPER or above.

create and update take the fields from flags, from --file (JSON or YAML; - reads stdin), or both:
flags win over the file. A file holds {name, description, instructions, members, starterPrompts}.

Examples:
  $ mapi agents create 3 Sales --description "Revenue and customers" --member orders --member customers
  $ mapi agents create 3 --file sales-agent.yaml
  $ mapi agents update 3 7 --instructions-file instructions.md --starter-prompt "Revenue by month?"
  $ mapi agents list 3
  $ mapi chat 3 --agent 7 "How many orders last week?"
`;

const COLUMNS: Column<Agent>[] = [
  { header: 'ID', value: (a) => a.id, align: 'right' },
  { header: 'NAME', value: (a) => a.name },
  { header: 'MEMBERS', value: (a) => (a.members === null ? 'all' : a.members.length), align: 'right' },
  { header: 'PROMPTS', value: (a) => a.starterPrompts.length, align: 'right' },
  { header: 'UPDATED (UTC)', value: (a) => shortDate(a.updatedAt) },
  { header: 'DESCRIPTION', value: (a) => (a.description && a.description.length > 60 ? `${a.description.slice(0, 59)}…` : a.description) },
];

const SUGGESTION_COLUMNS: Column<AgentSuggestion>[] = [
  { header: 'AGENT', value: (s) => s.agentId, align: 'right' },
  { header: 'NAME', value: (s) => s.agentName },
  { header: 'PROMPT', value: (s) => s.prompt },
];

interface AgentFlags {
  file?: string;
  name?: string;
  description?: string;
  instructions?: string;
  instructionsFile?: string;
  member?: string[];
  allMembers?: boolean;
  starterPrompt?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function withAgentFlags(command: Command): Command {
  return command
    .option('--file <file>', 'the fields as JSON or YAML (- reads stdin); flags win over it')
    .option('--description <text>', 'what the agent is for (shown to users)')
    .option('--instructions <text>', 'what the agent is told before every chat')
    .option('--instructions-file <file>', 'the instructions from a file (Markdown or text)')
    .option('--member <name>', 'a cube or view the agent may use; repeat for more (replaces the list)', collect)
    .option('--all-members', 'every member the asker can see (members: null)')
    .option('--starter-prompt <text>', 'a suggestion shown before a chat; repeat for more (replaces the list)', collect);
}

/** The body from --file, then the flags over it; the server checks lengths and limits. */
function agentFields(options: AgentFlags, name: string | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = options.file !== undefined ? readFields(options.file) : {};
  if (name !== undefined) fields.name = name;
  if (options.name !== undefined) fields.name = options.name;
  if (options.description !== undefined) fields.description = options.description;
  if (options.instructions !== undefined && options.instructionsFile !== undefined)
    throw new UsageError('Give --instructions or --instructions-file, not both.');
  if (options.instructions !== undefined) fields.instructions = options.instructions;
  if (options.instructionsFile !== undefined) fields.instructions = readText(options.instructionsFile);
  if (options.member !== undefined && options.allMembers) throw new UsageError('Give --member or --all-members, not both.');
  if (options.member !== undefined) fields.members = options.member;
  if (options.allMembers) fields.members = null;
  if (options.starterPrompt !== undefined) fields.starterPrompts = options.starterPrompt;
  return fields;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
}

/**
 * The agent a command is about: --agent, else the deployment's only one. With several and no
 * --agent, the error lists them, so the next command can be typed from it.
 */
export async function resolveAgent(client: MapiClient, deploymentId: number, agentFlag: string | undefined): Promise<Agent> {
  if (agentFlag !== undefined) return client.agents.get(deploymentId, parseId(agentFlag, '--agent'));
  const agents = await all(client.agents.list(deploymentId));
  if (agents.length === 1) return agents[0] as Agent;
  if (agents.length === 0)
    throw new UsageError(
      `Deployment ${deploymentId} has no agents.`,
      `Create one with \`mapi agents create ${deploymentId} <name>\` (EDIT on the deployment and the role DEVELOPER or above).`,
    );
  const list = agents.map((a) => `  ${a.id}  ${a.name}`).join('\n');
  throw new UsageError(`Deployment ${deploymentId} has ${agents.length} agents; pick one with --agent <id>:\n${list}`);
}

function show(context: Context, agent: Agent, what?: string): void {
  if (context.json) return writeJson(agent);
  if (what) note(`${what} agent ${agent.id} "${agent.name}".`);
  const lines = [
    `ID            ${agent.id}`,
    `NAME          ${agent.name}`,
    `DESCRIPTION   ${agent.description ?? '-'}`,
    `MEMBERS       ${agent.members === null ? 'all the asker can see' : agent.members.length === 0 ? '-' : agent.members.join(', ')}`,
    `CREATED BY    ${agent.createdBy?.email ?? '-'}`,
    `UPDATED (UTC) ${shortDate(agent.updatedAt)}`,
  ];
  if (agent.starterPrompts.length > 0) lines.push('STARTER PROMPTS', ...agent.starterPrompts.map((p) => `  - ${p}`));
  if (agent.instructions !== '') lines.push('INSTRUCTIONS', ...agent.instructions.split(/\r?\n/).map((l) => `  ${l}`));
  write(lines.join('\n'));
}

export function registerAgents(program: Command): void {
  const group = program.command('agents').description("A deployment's agents: who answers questions in `mapi chat`, and their starter prompts");
  group.addHelpText('after', HELP);

  group
    .command('list <deploymentId>')
    .alias('ls')
    .description("List a deployment's agents, newest first")
    .addHelpText('after', '\nExamples:\n  $ mapi agents list 3\n  $ mapi agents list 3 --json\n')
    .action(
      run(async (context, deploymentArg: string) => {
        const rows = await all(context.client().agents.list(parseId(deploymentArg, 'deploymentId')));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No agents.');
      }),
    );

  group
    .command('get <deploymentId> <agentId>')
    .description('Show an agent: its members, starter prompts and instructions')
    .addHelpText('after', '\nExamples:\n  $ mapi agents get 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        show(context, await context.client().agents.get(parseId(deploymentArg, 'deploymentId'), parseId(idArg, 'agentId')));
      }),
    );

  withAgentFlags(group.command('create <deploymentId> [name]'))
    .description('Create an agent (the name, from the argument or the file, is unique in the deployment)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi agents create 3 Sales --member orders --member customers --starter-prompt "Revenue by month?"\n  $ mapi agents create 3 --file sales-agent.yaml\n',
    )
    .action(
      run(async (context, deploymentArg: string, name: string | undefined, options: AgentFlags) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const fields = agentFields(options, name);
        if (typeof fields.name !== 'string') throw new UsageError('An agent needs a name: give it as the argument after the deployment, or as name in --file.');
        show(context, await context.client().agents.create(deploymentId, fields as CreateAgentInput), 'Created');
      }),
    );

  withAgentFlags(group.command('update <deploymentId> <agentId>'))
    .option('--name <name>', 'rename the agent')
    .description('Change an agent: only the fields given change')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi agents update 3 7 --name "Sales (EMEA)"\n  $ mapi agents update 3 7 --all-members\n  $ mapi agents update 3 7 --file sales-agent.yaml\n',
    )
    .action(
      run(async (context, deploymentArg: string, idArg: string, options: AgentFlags) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const agentId = parseId(idArg, 'agentId');
        const fields = agentFields(options, undefined);
        if (Object.keys(fields).length === 0) throw new UsageError('Nothing to change: give the fields with flags or --file.');
        show(context, await context.client().agents.update(deploymentId, agentId, fields as UpdateAgentInput), 'Updated');
      }),
    );

  group
    .command('delete <deploymentId> <agentId>')
    .alias('rm')
    .description('Delete an agent with its chat threads and scheduled tasks')
    .addHelpText('after', '\nExamples:\n  $ mapi agents delete 3 7\n')
    .action(
      run(async (context, deploymentArg: string, idArg: string) => {
        const agentId = parseId(idArg, 'agentId');
        await context.client().agents.delete(parseId(deploymentArg, 'deploymentId'), agentId);
        if (context.json) writeJson({ deleted: agentId });
        else note(`Deleted agent ${agentId} with its threads and scheduled tasks.`);
      }),
    );

  group
    .command('suggestions <deploymentId>')
    .description('The starter prompts of the agents you may use, agent by agent')
    .addHelpText('after', '\nExamples:\n  $ mapi agents suggestions 3\n')
    .action(
      run(async (context, deploymentArg: string) => {
        const rows = await context.client().agents.suggestions(parseId(deploymentArg, 'deploymentId'));
        if (context.json) writeJson(rows);
        else writeTable(SUGGESTION_COLUMNS, rows, 'No starter prompts.');
      }),
    );
  coversEach(group, {
    list: ['listAgents'],
    get: ['getAgent'],
    create: ['createAgent'],
    update: ['updateAgent'],
    delete: ['deleteAgent'],
    suggestions: ['listAgentSuggestions'],
  });
}
