import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { generateApiKey } from './areas/api-keys/key-format.js';
import { addTenantDomain, createTenant, defaultAdminEmail, describeTenants, TenantError, tenantHosts } from './areas/tenants/tenants.service.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrate, storeFor, type Store } from './db/database.js';

/*
 * `npm run admin -- <command>`: operator commands that need no API key because they run beside
 * the database. This file only parses arguments and prints; the rules live in the services.
 */

class UsageError extends Error {}

interface Output {
  out(line: string): void;
  err(line: string): void;
}

interface Parsed {
  values: Record<string, unknown>;
  positionals: string[];
}

interface Context extends Output {
  config: Config;
  store: Store;
}

interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Names of the required positional arguments, in order. */
  args: string[];
  /** Commands that only compute something skip the environment and the store. */
  offline?: (io: Output) => void;
  run?: (ctx: Context, parsed: Parsed) => Promise<void>;
}

const COMMANDS: Record<string, Command> = {
  'tenant create': {
    usage: `Usage: admin tenant create <slug> [--name NAME] [--domain HOST]... [--admin-email EMAIL]

Creates a tenant with its first admin user and prints that admin's API key once.
The tenant answers on each --domain and, when BASE_DOMAIN is set, on <slug>.<BASE_DOMAIN>.
The admin email defaults to admin@<slug>.<BASE_DOMAIN or localhost>.

Example:
  npm run admin -- tenant create acme --name "Acme Corp" --domain analytics.acme.com`,
    options: {
      name: { type: 'string' },
      domain: { type: 'string', multiple: true },
      'admin-email': { type: 'string' },
    },
    args: ['slug'],
    run: tenantCreate,
  },
  'tenant list': {
    usage: `Usage: admin tenant list

Lists every tenant with the hosts it answers on.

Example:
  npm run admin -- tenant list`,
    options: {},
    args: [],
    run: tenantList,
  },
  'tenant add-domain': {
    usage: `Usage: admin tenant add-domain <slug> <domain>

Maps a custom domain to an existing tenant; requests with that Host header reach the tenant.
A running server picks the new host up within a few seconds.

Example:
  npm run admin -- tenant add-domain acme reports.acme.com`,
    options: {},
    args: ['slug', 'domain'],
    run: tenantAddDomain,
  },
  'key generate': {
    usage: `Usage: admin key generate

Prints a new, well-formed API key without touching the database; set it as ADMIN_API_KEY
and the server makes it the default tenant's admin key at start-up.

Example:
  export ADMIN_API_KEY=$(npm run --silent admin -- key generate)`,
    options: {},
    args: [],
    offline: (io) => io.out(generateApiKey()),
  },
};

const OVERVIEW = `Usage: admin <command> [options]

Commands:
  tenant create <slug>            create a tenant, its first admin and API key
  tenant list                     list tenants and their hosts
  tenant add-domain <slug> <host> map a custom domain to a tenant
  key generate                    print a new key for ADMIN_API_KEY

Reads the server's environment (DATABASE_URL or DATA_DIR, BASE_DOMAIN).
Run "admin <command> --help" for a command's options.

Example:
  npm run admin -- tenant create acme --domain analytics.acme.com`;

async function tenantCreate(ctx: Context, { values, positionals }: Parsed): Promise<void> {
  const slug = positionals[0] ?? '';
  const made = await createTenant(ctx.store, {
    slug,
    name: values.name as string | undefined,
    domains: (values.domain as string[] | undefined) ?? [],
    adminEmail: (values['admin-email'] as string | undefined) ?? defaultAdminEmail(slug, ctx.config.baseDomain),
    baseDomain: ctx.config.baseDomain,
  });
  const hosts = tenantHosts(made.tenant, made.domains, ctx.config.baseDomain);
  ctx.out(`Created tenant ${made.tenant.slug} (id ${made.tenant.id}, name "${made.tenant.name}")`);
  ctx.out(`Hosts: ${hosts.length > 0 ? hosts.join(', ') : '(none: add one with "tenant add-domain", or set BASE_DOMAIN)'}`);
  ctx.out(`Admin: ${made.admin.email}`);
  ctx.out('');
  ctx.out('Admin API key (shown once; store it now):');
  ctx.out('');
  ctx.out(`  ${made.key}`);
  ctx.out('');
  ctx.out('Use it as: Authorization: Bearer <key>, on one of the hosts above.');
}

async function tenantList(ctx: Context): Promise<void> {
  const tenants = await describeTenants(ctx.store, ctx.config.baseDomain);
  const rows = tenants.map((t) => [String(t.id), t.slug, t.name, [...t.hosts, ...(t.anyHost ? ['(any other host)'] : [])].join(', ') || '(none)']);
  for (const line of table([['ID', 'SLUG', 'NAME', 'HOSTS'], ...rows])) ctx.out(line);
}

async function tenantAddDomain(ctx: Context, { positionals }: Parsed): Promise<void> {
  const [slug = '', domain = ''] = positionals;
  const host = await addTenantDomain(ctx.store, slug, domain, ctx.config.baseDomain);
  ctx.out(`Tenant ${slug} now answers on ${host}.`);
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}

/** Splits argv into the command (its first two words) and the rest. */
function findCommand(argv: string[]): { name: string; command: Command | undefined; rest: string[] } {
  const words: string[] = [];
  for (const arg of argv.slice(0, 2)) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  const name = words.join(' ');
  return { name, command: COMMANDS[name], rest: argv.slice(words.length) };
}

function parse(command: Command, rest: string[]): Parsed & { help: boolean } {
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Record<string, unknown>;
  const help = values.help === true;
  if (!help && parsed.positionals.length !== command.args.length) {
    const expected = command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ');
    throw new UsageError(`Expected ${expected}, got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.join(' ')}.`);
  }
  return { values, positionals: parsed.positionals, help };
}

async function withStore(env: NodeJS.ProcessEnv, io: Output, fn: (ctx: Context) => Promise<void>): Promise<void> {
  const config = loadConfig(env);
  const store = storeFor(config);
  try {
    await migrate(store);
    await fn({ ...io, config, store });
  } finally {
    await store.close();
  }
}

/**
 * Runs one admin command and returns the exit code: 0 on success, 2 for a usage, configuration
 * or tenant error (the message goes to stderr), 1 for anything unexpected.
 *
 * @example
 *   await runAdmin(['tenant', 'create', 'acme', '--domain', 'analytics.acme.com']);
 */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Output = stdio): Promise<number> {
  const { name, command, rest } = findCommand(argv);
  if (!command) {
    if (rest.includes('--help') || rest.includes('-h') || name === 'help') {
      io.out(OVERVIEW);
      return 0;
    }
    io.err(`${name === '' ? 'No command given.' : `Unknown command "${name}".`}\n\n${OVERVIEW}`);
    return 2;
  }
  try {
    const parsed = parse(command, rest);
    if (parsed.help) io.out(command.usage);
    else if (command.offline) command.offline(io);
    else if (command.run) {
      const run = command.run;
      await withStore(env, io, (ctx) => run(ctx, parsed));
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) io.err(`${error.message}\n\n${command.usage}`);
    else if (error instanceof ConfigError || error instanceof TenantError) io.err(error.message);
    else {
      io.err(`admin ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return 1;
    }
    return 2;
  }
}

const stdio: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  process.exitCode = await runAdmin(process.argv.slice(2));
}
