import fs from 'node:fs';
import type { Command } from 'commander';
import type { EmbedGroup, EmbedMember, EmbedTenant, EmbedUser, ProvisionEmbedUserInput, ProvisionFailure } from '@mapi/client';
import { run } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { all, plural, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { createProgress } from '../progress.js';
import { registerShareAndSession } from './embed-share.js';
import { coversEach } from '../operations.js';

const TENANT_COLUMNS: Column<EmbedTenant>[] = [
  { header: 'ID', value: (t) => t.id, align: 'right' },
  { header: 'NAME', value: (t) => t.name },
  { header: 'DISPLAY NAME', value: (t) => t.displayName },
  { header: 'USERS', value: (t) => t.userCount, align: 'right' },
  { header: 'CREATED', value: (t) => shortDate(t.createdAt) },
];
const USER_COLUMNS: Column<EmbedUser>[] = [
  { header: 'ID', value: (u) => u.id, align: 'right' },
  { header: 'EXTERNAL ID', value: (u) => u.externalId },
  { header: 'EMAIL', value: (u) => u.email },
  { header: 'NAME', value: (u) => u.firstName },
  { header: 'CREATED', value: (u) => shortDate(u.createdAt) },
  { header: 'LAST LOGIN', value: (u) => shortDate(u.lastLogin) },
];
const GROUP_COLUMNS: Column<EmbedGroup>[] = [
  { header: 'ID', value: (g) => g.id, align: 'right' },
  { header: 'NAME', value: (g) => g.name },
  { header: 'MEMBERS', value: (g) => g.userCount, align: 'right' },
  { header: 'DESCRIPTION', value: (g) => g.description },
];
const FAILED_COLUMNS: Column<ProvisionFailure>[] = [
  { header: 'EXTERNAL ID', value: (f) => f.externalId },
  { header: 'STATUS', value: (f) => f.error.status, align: 'right' },
  { header: 'MESSAGE', value: (f) => f.error.message },
];

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A member argument: `id:<n>` names an embed user by id, anything else is an external id. */
export function parseMember(value: string): EmbedMember {
  if (value.startsWith('id:')) return { embedUserId: parseId(value.slice(3), 'embed user id') };
  if (value.trim() === '') throw new UsageError('A member must be an external id, or id:<n> for an embed user id.');
  return { externalId: value };
}

/**
 * Users to provision, from a file or stdin (`-`): a JSON array of provisioning bodies, JSON lines
 * (one body a line), or plain lines (one external id a line).
 */
export function parseUsers(text: string): ProvisionEmbedUserInput[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    const parsed = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(parsed)) throw new UsageError('The file must hold a JSON array of users, JSON lines, or one external id a line.');
    return parsed.map((entry) => (typeof entry === 'string' ? { externalId: entry } : (entry as ProvisionEmbedUserInput)));
  }
  return trimmed
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => (line.startsWith('{') ? (JSON.parse(line) as ProvisionEmbedUserInput) : { externalId: line }));
}

function readInput(file: string): string {
  return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
}

export function registerEmbed(program: Command): void {
  const embed = program
    .command('embed')
    .description('Embedding: share dashboards with embed tenants, start sessions; embed tenants, their users and groups (admin key needed)');
  embed.addHelpText(
    'after',
    '\nExamples:\n  $ mapi embed share 3 12 --tenant acme\n  $ mapi embed session 3 Xk2f9aQ0bC4dE6fG8hJ1kL --tenant acme --user user-1\n  $ mapi embed tenants list\n  $ mapi embed users provision acme user-1 --email ana@acme.com --group Sales\n  $ mapi embed users import acme users.jsonl\n  $ mapi embed groups add acme 3 user-1 user-2 id:17\n',
  );

  const tenants = embed.command('tenants').description('Embed tenants of the account');
  tenants.addHelpText('after', '\nExamples:\n  $ mapi embed tenants list\n  $ mapi embed tenants delete acme\n');
  tenants
    .command('list')
    .alias('ls')
    .option('--search <text>', 'only tenants whose name contains this')
    .description('List embed tenants, by name')
    .addHelpText('after', '\nExamples:\n  $ mapi embed tenants list\n  $ mapi embed tenants list --search acme --json\n')
    .action(
      run(async (context, options: { search?: string }) => {
        const rows = await all(context.client().embedTenants.list(options.search ? { search: options.search } : {}));
        if (context.json) writeJson(rows);
        else writeTable(TENANT_COLUMNS, rows, 'No embed tenants match.');
      }),
    );
  tenants
    .command('delete')
    .argument('<name>', 'embed tenant name, in lowercase exactly')
    .description('Delete an embed tenant with its users, groups and shares (succeeds when it does not exist)')
    .addHelpText('after', '\nExamples:\n  $ mapi embed tenants delete acme\n')
    .action(
      run(async (context, name: string) => {
        await context.client().embedTenants.delete(name);
        if (context.json) writeJson({ deleted: name });
        else write(`Deleted embed tenant "${name}" and everything in it (or it did not exist).`);
      }),
    );

  const users = embed.command('users').description('Users of an embed tenant');
  users.addHelpText(
    'after',
    '\nExamples:\n  $ mapi embed users list acme --search ana\n  $ mapi embed users provision acme user-1 --group Sales\n  $ mapi embed users import acme users.jsonl\n',
  );
  users
    .command('list')
    .alias('ls')
    .argument('<tenant>', 'embed tenant name')
    .option('--search <text>', 'part of the email or external id')
    .description('List the users of an embed tenant, by email')
    .addHelpText('after', '\nExamples:\n  $ mapi embed users list acme\n  $ mapi embed users list acme --search user-1\n')
    .action(
      run(async (context, tenant: string, options: { search?: string }) => {
        const rows = await all(context.client().embedTenants.users(tenant, options.search ? { search: options.search } : {}));
        if (context.json) writeJson(rows);
        else writeTable(USER_COLUMNS, rows, 'No embed users match.');
      }),
    );
  users
    .command('provision')
    .argument('<tenant>', 'embed tenant name (created if it does not exist)')
    .argument('<externalId>', "the user's id in the embedding app")
    .option('--email <email>', 'email address (default: a placeholder address)')
    .option('--group <name>', "a global group (repeat for several; replaces the user's global groups)", collect)
    .option('--no-groups', 'clear the global groups')
    .option('--tenant-group <name>', "a group of the embed tenant (repeat; replaces the user's tenant groups)", collect)
    .option('--no-tenant-groups', 'clear the tenant groups')
    .option('--display-name <name>', 'profile display name')
    .option('--picture <url>', 'profile picture URL (http or https)')
    .description('Create or update one embed user to the state given')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi embed users provision acme user-1 --email ana@acme.com --group Sales --tenant-group editors\n  $ mapi embed users provision acme user-1 --no-groups\n',
    )
    .action(
      run(
        async (
          context,
          tenant: string,
          externalId: string,
          options: {
            email?: string;
            group?: string[];
            groups?: boolean;
            tenantGroup?: string[];
            tenantGroups?: boolean;
            displayName?: string;
            picture?: string;
          },
        ) => {
          const body: ProvisionEmbedUserInput = { externalId };
          if (options.email !== undefined) body.email = options.email;
          if (options.group) body.groups = options.group;
          else if (options.groups === false) body.groups = [];
          if (options.tenantGroup) body.tenantGroups = options.tenantGroup;
          else if (options.tenantGroups === false) body.tenantGroups = [];
          if (options.displayName !== undefined || options.picture !== undefined) {
            body.userProfile = {
              ...(options.displayName !== undefined ? { displayName: options.displayName } : {}),
              ...(options.picture !== undefined ? { picture: options.picture } : {}),
            };
          }
          const user = await context.client().embedTenants.provisionUser(tenant, body);
          if (context.json) writeJson(user);
          else write(`Provisioned embed user ${user.id} "${user.externalId ?? externalId}" (${user.email ?? 'no email'}) in "${tenant.toLowerCase()}".`);
        },
      ),
    );
  users
    .command('import')
    .argument('<tenant>', 'embed tenant name (created if it does not exist)')
    .argument('<file>', 'JSON array or JSON lines of provisioning bodies, or one external id a line; - for stdin')
    .description('Provision many embed users, 100 per request, in order; failures are listed per user')
    .addHelpText('after', '\nExit codes: 0 all provisioned, 2 some failed (listed), 1 the request itself failed.\n')
    .addHelpText('after', '\nExamples:\n  $ mapi embed users import acme users.jsonl\n  $ cat ids.txt | mapi embed users import acme -\n')
    .action(
      run(async (context, tenant: string, file: string) => {
        const list = parseUsers(readInput(file));
        if (list.length === 0) throw new UsageError(`No users in ${file === '-' ? 'stdin' : file}.`);
        const progress = context.json ? undefined : createProgress('provisioned');
        let result;
        try {
          result = await context.client().embedTenants.provisionUsers(tenant, list, progress ? { onProgress: (p) => progress.update(p) } : {});
        } finally {
          progress?.stop();
        }
        if (context.json) writeJson({ succeeded: result.succeeded, failed: result.failed });
        else {
          write(
            `Provisioned ${result.succeeded.length} of ${plural(list.length, 'user')} in "${tenant.toLowerCase()}" (${plural(result.requests, 'request')}).`,
          );
          if (result.failed.length > 0) {
            write(`\n${plural(result.failed.length, 'user')} failed:`);
            writeTable(FAILED_COLUMNS, result.failed, '');
          }
        }
        return result.failed.length > 0 ? EXIT.PARTIAL : EXIT.OK;
      }),
    );

  registerGroups(embed);
  registerShareAndSession(embed);
  coversEach(embed, {
    share: ['getWorkbookEmbedAccess', 'updateWorkbookEmbedAccess'],
    session: ['listUserAttributes', 'generateEmbedSession'],
    'tenants list': ['listEmbedTenants'],
    'tenants delete': ['deleteEmbedTenant'],
    'users list': ['listEmbedUsers'],
    'users provision': ['provisionEmbedUser'],
    'users import': ['provisionEmbedUsers'],
    'groups list': ['listEmbedGroups'],
    'groups create': ['createEmbedGroup'],
    'groups get': ['getEmbedGroup'],
    'groups update': ['updateEmbedGroup'],
    'groups delete': ['deleteEmbedGroup'],
    'groups members': ['listEmbedGroupMembers'],
    'groups add': ['addEmbedGroupMembers'],
    'groups remove': ['removeEmbedGroupMembers'],
  });
}

function registerGroups(embed: Command): void {
  const groups = embed.command('groups').description("An embed tenant's groups and their members");
  groups.addHelpText(
    'after',
    '\nExamples:\n  $ mapi embed groups list acme\n  $ mapi embed groups create acme editors\n  $ mapi embed groups add acme 3 user-1 id:17\n',
  );
  groups
    .command('list')
    .alias('ls')
    .argument('<tenant>', 'embed tenant name')
    .description('List the groups of an embed tenant, newest first')
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups list acme\n')
    .action(
      run(async (context, tenant: string) => {
        const rows = await all(context.client().embedTenants.groups(tenant));
        if (context.json) writeJson(rows);
        else writeTable(GROUP_COLUMNS, rows, 'The embed tenant has no groups.');
      }),
    );
  groups
    .command('create')
    .argument('<tenant>', 'embed tenant name')
    .argument('<name>', 'group name (fixed once made; may not start with system:)')
    .option('--description <text>', 'description')
    .description('Create a group in an embed tenant')
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups create acme editors --description "Can edit"\n')
    .action(
      run(async (context, tenant: string, name: string, options: { description?: string }) => {
        const group = await context
          .client()
          .embedTenants.createGroup(tenant, { name, ...(options.description !== undefined ? { description: options.description } : {}) });
        if (context.json) writeJson(group);
        else write(`Created group ${group.id} "${group.name}" in "${tenant.toLowerCase()}".`);
      }),
    );
  groups
    .command('get')
    .argument('<tenant>', 'embed tenant name')
    .argument('<id>', 'group id')
    .description('Show a group with its member count')
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups get acme 3\n')
    .action(
      run(async (context, tenant: string, id: string) => {
        const group = await context.client().embedTenants.getGroup(tenant, parseId(id, 'group id'));
        if (context.json) writeJson(group);
        else writeTable(GROUP_COLUMNS, [group], '');
      }),
    );
  groups
    .command('update')
    .argument('<tenant>', 'embed tenant name')
    .argument('<id>', 'group id')
    .requiredOption('--description <text>', 'the new description ("" clears it)')
    .description("Change a group's description (its name is fixed)")
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups update acme 3 --description "Can edit dashboards"\n')
    .action(
      run(async (context, tenant: string, id: string, options: { description: string }) => {
        const group = await context.client().embedTenants.updateGroup(tenant, parseId(id, 'group id'), options.description);
        if (context.json) writeJson(group);
        else write(`Updated group ${group.id} "${group.name}".`);
      }),
    );
  groups
    .command('delete')
    .argument('<tenant>', 'embed tenant name')
    .argument('<id>', 'group id')
    .description('Delete a group (it must have no members)')
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups delete acme 3\n')
    .action(
      run(async (context, tenant: string, id: string) => {
        const groupId = parseId(id, 'group id');
        await context.client().embedTenants.deleteGroup(tenant, groupId);
        if (context.json) writeJson({ deleted: groupId });
        else write(`Deleted group ${groupId}.`);
      }),
    );
  groups
    .command('members')
    .argument('<tenant>', 'embed tenant name')
    .argument('<id>', 'group id')
    .description("List a group's members, most recently added first")
    .addHelpText('after', '\nExamples:\n  $ mapi embed groups members acme 3 --json\n')
    .action(
      run(async (context, tenant: string, id: string) => {
        const rows = await all(context.client().embedTenants.members(tenant, parseId(id, 'group id')));
        if (context.json) writeJson(rows);
        else writeTable(USER_COLUMNS, rows, 'The group has no members.');
      }),
    );
  for (const [verb, past] of [
    ['add', 'added'],
    ['remove', 'removed'],
  ] as const) {
    groups
      .command(verb)
      .argument('<tenant>', 'embed tenant name')
      .argument('<id>', 'group id')
      .argument('<members...>', 'external ids, or id:<n> for embed user ids; - reads them from stdin, one a line')
      .description(
        verb === 'add' ? 'Add members (unknown external ids are provisioned), 1000 per request' : 'Remove members (non-members are skipped), 1000 per request',
      )
      .addHelpText('after', `\nExamples:\n  $ mapi embed groups ${verb} acme 3 user-1 user-2 id:17\n  $ cat ids.txt | mapi embed groups ${verb} acme 3 -\n`)
      .action(
        run(async (context, tenant: string, id: string, values: string[]) => {
          const groupId = parseId(id, 'group id');
          const raw =
            values.length === 1 && values[0] === '-'
              ? readInput('-')
                  .split(/\r?\n/)
                  .map((l) => l.trim())
                  .filter((l) => l !== '')
              : values;
          const members = raw.map(parseMember);
          const progress = context.json ? undefined : createProgress(past);
          const options = progress ? { onProgress: (p: Parameters<typeof progress.update>[0]) => progress.update(p) } : {};
          try {
            if (verb === 'add') {
              const result = await context.client().embedTenants.addMembers(tenant, groupId, members, options);
              progress?.stop();
              if (context.json) writeJson({ addedMembers: result.addedMembers, unchangedMembers: result.unchangedMembers });
              else write(`Added ${plural(result.addedMembers.length, 'member')} to group ${groupId}; ${result.unchangedMembers.length} already were.`);
            } else {
              await context.client().embedTenants.removeMembers(tenant, groupId, members, options);
              progress?.stop();
              if (context.json) writeJson({ removed: members });
              else write(`Removed ${plural(members.length, 'member')} from group ${groupId} (those that were members).`);
            }
          } finally {
            progress?.stop();
          }
        }),
      );
  }
}
