import type { Command } from 'commander';
import { unwrap, type MapiClient, type User } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { all, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const ROLES = ['ADMIN', 'DEVELOPER', 'EXPLORER', 'VIEWER'] as const;
type Role = (typeof ROLES)[number];

function parseRole(value: string): Role {
  const role = value.toUpperCase();
  if (!ROLES.includes(role as Role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${value}".`);
  return role as Role;
}

const COLUMNS: Column<User>[] = [
  { header: 'ID', value: (u) => u.id, align: 'right' },
  { header: 'EMAIL', value: (u) => u.email },
  { header: 'NAME', value: (u) => u.firstName },
  { header: 'ROLE', value: (u) => u.role },
  { header: 'STATUS', value: (u) => (u.active ? 'active' : 'deactivated') },
  { header: 'CREATED', value: (u) => shortDate(u.createdAt) },
];

/** A user argument: an id, or an email looked up in the user list (what an admin usually has at hand). */
async function resolveUser(client: MapiClient, value: string): Promise<User> {
  if (!value.includes('@')) {
    const userId = parseId(value, 'user (an id or an email)');
    return unwrap(await client.GET('/api/v1/users/{userId}', { params: { path: { userId } } }));
  }
  const wanted = value.toLowerCase();
  for await (const user of client.users.list()) if (user.email.toLowerCase() === wanted) return user;
  throw new UsageError(`No user with email ${value}.`, '`mapi users list` shows users and their ids.');
}

export function registerUsers(program: Command): void {
  const users = program.command('users').description('Users of the account (admin key needed)');
  users.addHelpText(
    'after',
    '\nExamples:\n  $ mapi users list\n  $ mapi users create ana@example.com --name Ana --role DEVELOPER\n  $ mapi users deactivate ana@example.com\n',
  );

  users
    .command('list')
    .alias('ls')
    .option('--role <role>', `only users with this role (${ROLES.join(', ')})`)
    .option('--active', 'only active users')
    .option('--deactivated', 'only deactivated users')
    .description('List users')
    .addHelpText('after', '\nExamples:\n  $ mapi users list\n  $ mapi users list --role ADMIN --active\n  $ mapi users list --json\n')
    .action(
      run(async (context, options: { role?: string; active?: boolean; deactivated?: boolean }) => {
        if (options.active && options.deactivated) throw new UsageError('--active and --deactivated exclude each other.');
        const query = {
          ...(options.role !== undefined ? { role: parseRole(options.role) } : {}),
          ...(options.active ? { active: true } : options.deactivated ? { active: false } : {}),
        };
        const rows = await all(context.client().users.list(query));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No users match.');
      }),
    );

  users
    .command('create')
    .argument('<email>', 'email address (unique in the account)')
    .option('--name <firstName>', 'first name')
    .option('--role <role>', `${ROLES.join(', ')}`, 'EXPLORER')
    .description('Create a user')
    .addHelpText('after', '\nExamples:\n  $ mapi users create ana@example.com\n  $ mapi users create ana@example.com --name Ana --role ADMIN --json\n')
    .action(
      run(async (context, email: string, options: { name?: string; role: string }) => {
        const body = { email, role: parseRole(options.role), ...(options.name ? { firstName: options.name } : {}) };
        const user = unwrap(await context.client().POST('/api/v1/users', { body }));
        if (context.json) writeJson(user);
        else write(`Created user ${user.id}: ${user.email} (${user.role}).`);
      }),
    );

  users
    .command('deactivate')
    .argument('<user>', 'user id or email')
    .description('Deactivate a user: their API keys stop working at once')
    .addHelpText('after', '\nExamples:\n  $ mapi users deactivate 7\n  $ mapi users deactivate ana@example.com\n')
    .action(
      run(async (context, value: string) => {
        const client = context.client();
        const user = await resolveUser(client, value);
        const path = { userId: user.id };
        unwrap(await client.DELETE('/api/v1/users/{userId}', { params: { path } }));
        // Read back, so --json shows the stored state rather than a guess.
        if (context.json) writeJson(unwrap(await client.GET('/api/v1/users/{userId}', { params: { path } })));
        else write(`Deactivated user ${user.id} (${user.email}); their API keys no longer work.`);
      }),
    );
  coversEach(users, { list: ['listUsers'], create: ['createUser'], deactivate: ['deactivateUser', 'getUser', 'listUsers'] });
}
