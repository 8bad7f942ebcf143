import fs from 'node:fs';
import type { Command } from 'commander';
import type { Role, RolePolicy } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { note, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const RESOURCE_TYPES = ['Deployment', 'Global'] as const;
const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * A policy written on the command line: `TYPE:ACTIONS:RESOURCES`, the lists separated by commas,
 * for example `Deployment:DeploymentRead,SchemaRead:12,14` or `Global:AIBIDevelop:All`.
 */
export function parsePolicy(value: string): RolePolicy {
  const parts = value.split(':');
  const [type, actions, resources] = parts;
  const list = (text: string | undefined) =>
    (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const resourceType = RESOURCE_TYPES.find((t) => t.toLowerCase() === (type ?? '').trim().toLowerCase());
  if (parts.length !== 3 || resourceType === undefined || list(actions).length === 0 || list(resources).length === 0) {
    throw new UsageError(
      `"${value}" is not a policy: write TYPE:ACTIONS:RESOURCES, TYPE being ${RESOURCE_TYPES.join(' or ')}, the lists separated by commas.`,
      'For example --policy Deployment:DeploymentRead,SchemaRead:12,14 --policy Global:AIBIDevelop:All',
    );
  }
  return { resourceType, actions: list(actions), resources: list(resources) };
}

/** `--policy` values, then the JSON array of `--policies-file` (a file of `{resourceType, actions, resources}`). */
export function policiesFrom(options: { policy?: string[]; policiesFile?: string }): RolePolicy[] | undefined {
  if (options.policy === undefined && options.policiesFile === undefined) return undefined;
  const policies = (options.policy ?? []).map(parsePolicy);
  if (options.policiesFile !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(options.policiesFile, 'utf8'));
    } catch (error) {
      throw new UsageError(`--policies-file ${options.policiesFile}: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`--policies-file ${options.policiesFile} must hold a JSON array of policies.`);
    policies.push(...(parsed as RolePolicy[]));
  }
  return policies;
}

export const describePolicy = (p: RolePolicy): string => `${p.resourceType}:${p.actions.join(',')}:${p.resources.join(',')}`;

const COLUMNS: Column<Role>[] = [
  { header: 'ID', value: (r) => r.id, align: 'right' },
  { header: 'NAME', value: (r) => r.name },
  { header: 'DESCRIPTION', value: (r) => r.description ?? null },
  { header: 'POLICIES', value: (r) => r.policies.map(describePolicy).join(' ') },
];

function show(role: Role, json: boolean): void {
  if (json) return writeJson(role);
  write(`${role.id}\t${role.name}${role.description ? `\t${role.description}` : ''}\n`);
  for (const policy of role.policies) write(`  ${describePolicy(policy)}\n`);
}

/** Exactly one of `--user` and `--group`. */
function holderOf(options: { user?: string; group?: string }): { user: number } | { group: number } {
  if ((options.user === undefined) === (options.group === undefined)) throw new UsageError('Give exactly one of --user <userId> and --group <groupId>.');
  return options.user !== undefined ? { user: parseId(options.user, '--user') } : { group: parseId(options.group!, '--group') };
}

const HELP = `
Custom roles: named policies that users (and members of groups) hold on top of their built-in role.
A policy is TYPE:ACTIONS:RESOURCES. Deployment policies name deployment ids or All; the action All
is full access. A Global policy carries the tier (AIBIView, AIBIExplore, AIBIDevelop): every
deployment action except DeploymentRead, DeploymentAgentRead, DownloadData and ChatHistoryRead
needs AIBIDevelop (or the built-in role DEVELOPER). Needs an admin key.

Examples:
  $ mapi roles list
  $ mapi roles create "Deployment 12 engineers" --policy Deployment:All:12 --policy Global:AIBIDevelop:All
  $ mapi roles update 4 --policy Deployment:DeploymentRead:All      # replaces every policy
  $ mapi roles assign 4 --user 31
  $ mapi roles unassign 4 --group 7
`;

export function registerRoles(program: Command): void {
  const roles = program.command('roles').description('Custom roles and who holds them (admin key needed)');
  roles.addHelpText('after', HELP);

  roles
    .command('list')
    .alias('ls')
    .description('List the custom roles, newest first')
    .addHelpText('after', '\nExamples:\n  $ mapi roles list\n  $ mapi roles list --json\n')
    .action(
      run(async (context) => {
        const rows: Role[] = [];
        for await (const role of context.client().roles.list()) rows.push(role);
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No custom roles.');
      }),
    );

  roles
    .command('get <roleId>')
    .description('Show a role with its policies')
    .addHelpText('after', '\nExamples:\n  $ mapi roles get 4\n  $ mapi roles get 4 --json\n')
    .action(
      run(async (context, roleArg: string) => {
        show(await context.client().roles.get(parseId(roleArg, 'roleId')), context.json);
      }),
    );

  roles
    .command('create <name>')
    .description('Create a role')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi roles create Readers --policy Deployment:DeploymentRead:All\n  $ mapi roles create "Deployment 12 engineers" --policy Deployment:All:12 --policy Global:AIBIDevelop:All\n  $ mapi roles create Auditors --policies-file auditors.json\n',
    )
    .option('--description <text>', 'what the role is for')
    .option('--policy <TYPE:ACTIONS:RESOURCES>', 'a policy; repeat for more', collect)
    .option('--policies-file <file>', 'a JSON array of policies, added after the --policy ones')
    .action(
      run(async (context, name: string, options: { description?: string; policy?: string[]; policiesFile?: string }) => {
        const role = await context
          .client()
          .roles.create({ name, ...(options.description !== undefined ? { description: options.description } : {}), policies: policiesFrom(options) ?? [] });
        show(role, context.json);
      }),
    );

  roles
    .command('update <roleId>')
    .description('Change a role; --policy or --policies-file replaces every policy')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi roles update 4 --name "Readers (EU)" --clear-description\n  $ mapi roles update 4 --policy Deployment:DeploymentRead:12,14\n  $ mapi roles update 4 --clear-policies\n',
    )
    .option('--name <name>', 'a new name')
    .option('--description <text>', 'a new description')
    .option('--clear-description', 'remove the description')
    .option('--policy <TYPE:ACTIONS:RESOURCES>', 'a policy; repeat for more (replaces them all)', collect)
    .option('--policies-file <file>', 'a JSON array of policies (replaces them all)')
    .option('--clear-policies', 'remove every policy')
    .action(
      run(
        async (
          context,
          roleArg: string,
          options: { name?: string; description?: string; clearDescription?: boolean; policy?: string[]; policiesFile?: string; clearPolicies?: boolean },
        ) => {
          const roleId = parseId(roleArg, 'roleId');
          if (options.description !== undefined && options.clearDescription) throw new UsageError('Give --description or --clear-description, not both.');
          const policies = policiesFrom(options);
          if (policies !== undefined && options.clearPolicies) throw new UsageError('Give --policy/--policies-file or --clear-policies, not both.');
          const input = {
            ...(options.name !== undefined ? { name: options.name } : {}),
            ...(options.description !== undefined ? { description: options.description } : {}),
            ...(options.clearDescription ? { description: null } : {}),
            ...(policies !== undefined ? { policies } : {}),
            ...(options.clearPolicies ? { policies: [] } : {}),
          };
          if (Object.keys(input).length === 0) throw new UsageError('Nothing to change: give --name, --description, --policy and the like.');
          show(await context.client().roles.update(roleId, input), context.json);
        },
      ),
    );

  roles
    .command('delete <roleId>')
    .description('Delete a role; everyone holding it loses it')
    .addHelpText('after', '\nExamples:\n  $ mapi roles delete 4\n')
    .action(
      run(async (context, roleArg: string) => {
        const roleId = parseId(roleArg, 'roleId');
        await context.client().roles.delete(roleId);
        if (context.json) writeJson({ deleted: roleId });
        else note(`Deleted role ${roleId}.`);
      }),
    );

  for (const [verb, description] of [
    ['assign', 'Give a role to a user or a group (nothing changes if they hold it)'],
    ['unassign', 'Take a role from a user or a group (nothing changes if they do not hold it)'],
  ] as const) {
    roles
      .command(`${verb} <roleId>`)
      .description(description)
      .addHelpText('after', `\nExamples:\n  $ mapi roles ${verb} 4 --user 31\n  $ mapi roles ${verb} 4 --group 7\n`)
      .option('--user <userId>', 'the user')
      .option('--group <groupId>', 'the group')
      .action(
        run(async (context, roleArg: string, options: { user?: string; group?: string }) => {
          const roleId = parseId(roleArg, 'roleId');
          const holder = holderOf(options);
          const client = context.client().roles;
          if ('user' in holder) await (verb === 'assign' ? client.assignUser(roleId, holder.user) : client.unassignUser(roleId, holder.user));
          else await (verb === 'assign' ? client.assignGroup(roleId, holder.group) : client.unassignGroup(roleId, holder.group));
          const who = 'user' in holder ? `user ${holder.user}` : `group ${holder.group}`;
          if (context.json) writeJson({ roleId, ...holder, [verb === 'assign' ? 'assigned' : 'unassigned']: true });
          else note(verb === 'assign' ? `Role ${roleId} assigned to ${who}.` : `Role ${roleId} taken from ${who}.`);
        }),
      );
  }
  coversEach(roles, {
    list: ['listRoles'],
    get: ['getRole'],
    create: ['createRole'],
    update: ['updateRole'],
    delete: ['deleteRole'],
    assign: ['assignRoleToUser', 'assignRoleToGroup'],
    unassign: ['unassignRoleFromUser', 'unassignRoleFromGroup'],
  });
}
