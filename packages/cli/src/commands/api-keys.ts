import type { Command } from 'commander';
import { unwrap, type ApiKey } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { reserveKeyFile, type KeyFile } from '../key-file.js';
import { all, note, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

function status(key: ApiKey, now = Date.now()): string {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

const COLUMNS: Column<ApiKey>[] = [
  { header: 'ID', value: (k) => k.id, align: 'right' },
  { header: 'NAME', value: (k) => k.name },
  { header: 'PREFIX', value: (k) => k.prefix },
  { header: 'USER', value: (k) => k.userId },
  { header: 'DEPLOYMENTS', value: (k) => (k.deploymentIds === null ? 'all' : k.deploymentIds.join(',')) },
  { header: 'EXPIRES', value: (k) => shortDate(k.expiresAt) ?? 'never' },
  { header: 'LAST USED', value: (k) => shortDate(k.lastUsedAt) ?? 'never' },
  { header: 'STATUS', value: (k) => status(k) },
];

/** "30d" (days from now) or an ISO 8601 date or date-time, sent as a date-time. */
export function parseExpiry(value: string, now = Date.now()): string {
  const days = /^(\d+)d$/i.exec(value.trim());
  if (days) return new Date(now + Number(days[1]) * 86_400_000).toISOString();
  const time = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time))
    throw new UsageError(`--expires must be a date (2026-12-31), a date-time (2026-12-31T18:00:00Z) or a number of days (30d), got "${value}".`);
  return new Date(time).toISOString();
}

interface CreateOptions {
  name: string;
  deployments?: string;
  expires?: string;
  user?: string;
  output?: string;
  force?: boolean;
}

function parseDeployments(value: string): number[] {
  return value.split(',').map((part) => parseId(part, '--deployments (comma-separated deployment ids)'));
}

export function registerApiKeys(program: Command): void {
  const keys = program.command('api-keys').description('API keys: create, list, revoke');
  keys.addHelpText(
    'after',
    '\nExamples:\n  $ mapi api-keys create --name ci --deployments 1,2 --expires 90d\n  $ mapi api-keys list\n  $ mapi api-keys revoke 5\n',
  );

  keys
    .command('create')
    .requiredOption('--name <name>', 'a name to tell the key apart')
    .option('--deployments <ids>', 'comma-separated deployment ids the key is limited to; every deployment when left out')
    .option('--expires <when>', 'expiry: a date, a date-time, or a number of days such as 30d; never when left out')
    .option('--user <userId>', 'create the key for another user (admins only); your own when left out')
    .option('-o, --output <file>', 'write the key to this file (mode 0600; a missing directory is created with mode 0700) instead of stdout')
    .option('--force', 'with --output: replace the file if it exists')
    .description('Create an API key. The key is printed once, alone on stdout (or written to --output); details go to stderr')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi api-keys create --name laptop\n  $ mapi api-keys create --name "reorg script" --output .mapi/script.key\n  $ MAPI_TOKEN=$(mapi api-keys create --name ci --deployments 3 --expires 30d)\n  $ mapi api-keys create --name bot --user 7 --json\n',
    )
    .action(
      run(async (context, options: CreateOptions) => {
        // Present but empty (an unset shell variable, say) is a mistake: left out, each means something broader.
        const body = {
          name: options.name,
          ...(options.deployments !== undefined ? { deploymentIds: parseDeployments(options.deployments) } : {}),
          ...(options.expires !== undefined ? { expiresAt: parseExpiry(options.expires) } : {}),
          ...(options.user !== undefined ? { userId: parseId(options.user, '--user') } : {}),
        };
        if (options.force && options.output === undefined) throw new UsageError('--force only applies with --output.');
        if (options.output !== undefined && options.output.trim() === '')
          throw new UsageError('--output is empty.', 'Give the file to write the key to, e.g. --output .mapi/script.key.');
        const client = context.client();
        // Reserved first: a file that cannot be written must fail before the key exists.
        const file: KeyFile | undefined = options.output === undefined ? undefined : reserveKeyFile(options.output, options.force === true);
        let created;
        try {
          created = unwrap(await client.POST('/api/v1/api-keys', { body }));
        } catch (error) {
          file?.discard();
          throw error;
        }
        file?.commit(created.key);
        if (context.json) {
          // With --output the secret stays in its file, out of logs that capture stdout.
          if (file) {
            const { key: _key, ...details } = created;
            writeJson({ ...details, keyFile: file.path });
          } else writeJson(created);
          return;
        }
        const scope = created.deploymentIds === null ? 'every deployment' : `deployments ${created.deploymentIds.join(', ')}`;
        note(`Created API key ${created.id} "${created.name}" for user ${created.userId}: ${scope}, expires ${shortDate(created.expiresAt) ?? 'never'}.`);
        if (file) {
          note(`Saved the key to ${file.path} (mode 0600); it is shown nowhere else.`);
          return;
        }
        note('The key is shown only now; store it:');
        write(created.key);
      }),
    );

  keys
    .command('list')
    .alias('ls')
    .option('--all', 'include revoked keys')
    .option('--user <userId>', 'only the keys of this user')
    .description('List API keys (admins see every key, others their own); secrets are never shown')
    .addHelpText('after', '\nExamples:\n  $ mapi api-keys list\n  $ mapi api-keys list --all --user 7\n')
    .action(
      run(async (context, options: { all?: boolean; user?: string }) => {
        const query = { ...(options.all ? { includeRevoked: true } : {}), ...(options.user ? { userId: parseId(options.user, '--user') } : {}) };
        const rows = await all(context.client().apiKeys.list(query));
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No API keys.');
      }),
    );

  keys
    .command('revoke')
    .argument('<apiKeyId>', 'key id (see `mapi api-keys list`)')
    .description('Revoke an API key; it stops working on the next request')
    .addHelpText('after', '\nExample:\n  $ mapi api-keys revoke 5\n')
    .action(
      run(async (context, value: string) => {
        const apiKeyId = parseId(value, 'apiKeyId');
        unwrap(await context.client().DELETE('/api/v1/api-keys/{apiKeyId}', { params: { path: { apiKeyId } } }));
        if (context.json) writeJson({ id: apiKeyId, revoked: true });
        else write(`Revoked API key ${apiKeyId}.`);
      }),
    );
  coversEach(keys, { create: ['createApiKey'], list: ['listApiKeys'], revoke: ['revokeApiKey'] });
}
