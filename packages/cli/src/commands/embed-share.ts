import type { Command } from 'commander';
import type { EmbedShareTarget, GenerateEmbedSessionInput, MapiClient } from '@mapi/client';
import { unwrap } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { write, writeJson } from '../output.js';

const SHARE_HELP = `
Shares the workbook read-only with one embed tenant (--tenant) or every embed user
(--all-embed-users), and turns on signed embedding of its published dashboard when it is off,
so that the tenant's sessions open it. Shares with other tenants are kept: each share is written
on its own, never by replacing the list. --level none removes the share (and leaves the switch).
Access is per tenant: every user of the tenant sees the shared dashboard; tenant groups and user
attributes decide which rows they see, through the data model's policies.

The embed tenant must exist: it does once a user is provisioned in it (mapi embed users
provision) or a session names it. Needs MANAGE on the workbook.

Examples:
  $ mapi embed share 3 12 --tenant acme
  $ mapi embed share 3 12 --all-embed-users --json
  $ mapi embed share 3 12 --tenant acme --level none
`;

const SESSION_HELP = `
Generates a one-time session for one viewer of the embed tenant (the tenant and the viewer are
created or updated now) and prints the URL of the embedded dashboard page for it: open it once,
within 5 minutes, or put it in an iframe's src. The viewer sees the dashboard once it is shared
with their tenant (mapi embed share). --json prints the session id, the URL and the dashboard's
public id and deployment.

--attr sets a user attribute of the account's catalog (/api/v1/user-attributes), typed as the
catalog says: numbers, true or false, a comma-separated list for a string list. --group names
a group of the account the viewer belongs to (it must exist; the list replaces the viewer's).

Examples:
  $ mapi embed session 3 Xk2f9aQ0bC4dE6fG8hJ1kL --tenant acme --user user-1
  $ mapi embed session 3 Xk2f9aQ0bC4dE6fG8hJ1kL --tenant acme --user user-1 --attr region=EU --group Sales --json
`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

type AttributeType = 'string' | 'number' | 'boolean' | 'string-list';
type AttributeValue = string | number | boolean | string[];

/** `name=value` flags, typed by the catalog; a name it does not hold is sent as text, for the server to name in its refusal. */
export function parseAttributes(flags: string[], types: ReadonlyMap<string, AttributeType>): { name: string; value: AttributeValue }[] {
  return flags.map((flag) => {
    const at = flag.indexOf('=');
    if (at <= 0) throw new UsageError(`--attr "${flag}" is not name=value.`, 'For example --attr region=EU.');
    const name = flag.slice(0, at);
    const text = flag.slice(at + 1);
    const type = types.get(name.toLowerCase());
    if (type === 'number') {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--attr ${name} is a number attribute, got "${text}".`);
      return { name, value };
    }
    if (type === 'boolean') {
      if (text !== 'true' && text !== 'false') throw new UsageError(`--attr ${name} is a boolean attribute: give true or false, got "${text}".`);
      return { name, value: text === 'true' };
    }
    if (type === 'string-list') return { name, value: text === '' ? [] : text.split(',') };
    return { name, value: text };
  });
}

async function attributeTypes(client: MapiClient): Promise<Map<string, AttributeType>> {
  const catalog = unwrap(await client.GET('/api/v1/user-attributes'));
  return new Map(catalog.items.map((a) => [a.name.toLowerCase(), a.type]));
}

export function registerShareAndSession(embed: Command): void {
  embed
    .command('share')
    .argument('<deploymentId>', 'deployment id')
    .argument('<workbookId>', 'the workbook whose published dashboard is embedded')
    .option('--tenant <name>', 'the embed tenant to share with')
    .option('--all-embed-users', 'share with every embed user of the account instead')
    .option('--level <level>', 'read (share) or none (remove the share)', 'read')
    .option('--no-allow-embed', 'leave signed embedding of the dashboard as it is')
    .description("Share a workbook's dashboard with an embed tenant and turn on signed embedding")
    .addHelpText('after', SHARE_HELP)
    .action(
      run(
        async (
          context,
          deploymentArg: string,
          workbookArg: string,
          options: { tenant?: string; allEmbedUsers?: boolean; level: string; allowEmbed: boolean },
        ) => {
          const deploymentId = parseId(deploymentArg, 'deploymentId');
          const workbookId = parseId(workbookArg, 'workbookId');
          if ((options.tenant === undefined) === (options.allEmbedUsers !== true))
            throw new UsageError('Give exactly one of --tenant NAME and --all-embed-users.', 'For example --tenant acme.');
          if (options.level !== 'read' && options.level !== 'none') throw new UsageError(`--level must be read or none, got "${options.level}".`);
          const target: EmbedShareTarget = options.tenant !== undefined ? { embedTenantName: options.tenant } : { allEmbedUsers: true };
          const result = await context.client().embedAccess.shareWorkbook(deploymentId, workbookId, target, {
            action: options.level,
            ...(options.allowEmbed ? {} : { allowEmbed: null }),
          });
          if (context.json) {
            writeJson(result);
            return;
          }
          const whom = options.tenant !== undefined ? `embed tenant "${options.tenant.toLowerCase()}"` : 'all embed users';
          const what =
            options.level === 'read'
              ? result.changed
                ? `Shared workbook:${workbookId} with ${whom}`
                : `Workbook:${workbookId} was already shared with ${whom}`
              : result.changed
                ? `Removed the share of workbook:${workbookId} with ${whom}`
                : `Workbook:${workbookId} was not shared with ${whom}`;
          const embedding = result.allowEmbedChanged
            ? `signed embedding turned ${result.access.allowEmbed ? 'on' : 'off'}`
            : `signed embedding ${result.access.allowEmbed ? 'on' : 'off'}`;
          const tenants = result.access.tenants.filter((t) => t.action === 'read').map((t) => t.embedTenantName);
          const all = result.access.allEmbedUsers.enabled && result.access.allEmbedUsers.action === 'read' ? ['all embed users'] : [];
          const shares = [...all, ...tenants];
          write(`${what}; ${embedding}. Shared with: ${shares.length > 0 ? shares.join(', ') : 'nobody'}.`);
        },
      ),
    );

  embed
    .command('session')
    .argument('<deploymentId>', 'deployment id')
    .argument('<publicId>', "the published dashboard's public id")
    .requiredOption('--tenant <name>', 'the embed tenant of the viewer (created if it does not exist)')
    .requiredOption('--user <externalId>', "the viewer's id in the embedding app")
    .option('--attr <name=value>', 'a user attribute of the viewer (repeatable)', collect)
    .option('--group <name>', 'a group of the account the viewer belongs to (repeatable)', collect)
    .option('--locale <tag>', "the page's locale, e.g. de-DE")
    .option('--timezone <zone>', "the page's time zone, e.g. Europe/Berlin")
    .description('Start an embed session for one viewer and print the URL of the embedded dashboard')
    .addHelpText('after', SESSION_HELP)
    .action(
      run(
        async (
          context,
          deploymentArg: string,
          publicId: string,
          options: { tenant: string; user: string; attr?: string[]; group?: string[]; locale?: string; timezone?: string },
        ) => {
          const deploymentId = parseId(deploymentArg, 'deploymentId');
          const client = context.client();
          const input: GenerateEmbedSessionInput = { deploymentId, embedTenantName: options.tenant.toLowerCase(), externalId: options.user };
          if (options.attr) input.userAttributes = parseAttributes(options.attr, await attributeTypes(client));
          if (options.group) input.groups = options.group;
          const session = await client.embed.startSession(publicId, input, {
            ...(options.locale === undefined ? {} : { locale: options.locale }),
            ...(options.timezone === undefined ? {} : { timezone: options.timezone }),
          });
          if (context.json) writeJson(session);
          else write(session.url);
        },
      ),
    );
}
