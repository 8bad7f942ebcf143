import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { generateApiKey } from './areas/api-keys/key-format.js';
import { addTenantDomain, createTenant, defaultAdminEmail, describeTenants, TenantError, tenantHosts } from './areas/tenants/tenants.service.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrate, storeFor, type Store } from './db/database.js';
import { generateKeyText, reencryptAll, SecretKeyError, Secrets, SecretsError, loadSecretKeys } from './secrets/index.js';
import { openSecrets, SECRET_COLUMNS } from './stored-secrets.js';
import { Signing } from './signing/index.js';
import { findTenantBySlug, setTenantRegions } from './areas/tenants/tenants.store.js';
import { findActiveUserIdByEmail } from './areas/users/users.store.js';
import { tenantOrigin } from './areas/tenants/tenant-origin.js';
import { OAuthProviders } from './areas/oauth/oauth.provider.js';
import { approveDeviceCode } from './areas/oauth/oauth.service.js';
import { DEFAULT_TENANT_SLUG } from './areas/tenants/tenants.service.js';
import { ApiError } from './shared/problems.js';
import { systemClock } from './time.js';

/*
 * `npm run admin -- <command>`: operator commands that need no API key because they run beside
 * the database. This file only parses arguments and prints; the rules live in the services.
 */

class UsageError extends Error {}

/** The store could not be opened or migrated: the environment, not the command, needs fixing. */
class DatabaseError extends Error {}

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
  'tenant regions': {
    usage: `Usage: admin tenant regions <slug> --regions NAMES | --all

Limits the regions the tenant's deployments may run in to NAMES (comma-separated, each one of
REGIONS), or with --all lifts the limit. GET /api/v1/regions then lists only those, and creating
or moving a deployment elsewhere is refused. Deployments already elsewhere stay where they are.

Example:
  npm run admin -- tenant regions acme --regions local`,
    options: { regions: { type: 'string' }, all: { type: 'boolean' } },
    args: ['slug'],
    run: tenantRegionsCommand,
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
  'secrets re-encrypt': {
    usage: `Usage: admin secrets re-encrypt

Encrypts every stored secret (environment variables' values) again under the current secret key,
the first of MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE, and prints how many values it moved. Values
already under it are left alone, so running it again changes nothing. When no value is left under
an older key, the database forgets that key and it may leave the configuration.

Rotation: put the new key first and keep the old one after it (MAPI_SECRET_KEY=new:<key>,old:<key>),
restart every server, run this, then remove the old key.

Example:
  MAPI_SECRET_KEY="k2:$(npm run --silent admin -- secrets generate-key),$MAPI_SECRET_KEY" npm run admin -- secrets re-encrypt`,
    options: {},
    args: [],
    run: secretsReencrypt,
  },
  'secrets generate-key': {
    usage: `Usage: admin secrets generate-key

Prints a new secret key (32 random bytes, base64) without touching the database, for
MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE. Keep it: values encrypted with it cannot be read without it.

Example:
  export MAPI_SECRET_KEY="k1:$(npm run --silent admin -- secrets generate-key)"`,
    options: {},
    args: [],
    offline: (io) => io.out(generateKeyText()),
  },
  'signing rotate': {
    usage: `Usage: admin signing rotate --tenant SLUG [--purpose default|embed|workload]

Makes a new signing key sign the tenant's tokens from now on. The previous key keeps verifying,
and stays in the tenant's key set (/api/v1/data-api/jwks.json), until every token it signed has
expired (a day and a minute); then it is deleted. Rotate when a private key may have leaked:
this is how issued tokens are revoked, a day at the latest.

--purpose embed rotates the keys of embed tokens instead (/api/v1/embed/jwks.json), --purpose
workload those of workload-identity tokens (/.well-known/jwks.json: revoking them early means
rotating); default: the keys of data-API tokens.

Example:
  npm run admin -- signing rotate --tenant acme
  npm run admin -- signing rotate --tenant acme --purpose embed`,
    options: { tenant: { type: 'string' }, purpose: { type: 'string' } },
    args: [],
    run: signingRotate,
  },
  'approve-device': {
    usage: `Usage: admin approve-device <user code> --user EMAIL [--tenant SLUG]

Approves a device sign-in ("mapi login --device") for a tenant without an identity provider: the
device that shows <user code> receives OAuth tokens acting as the user with EMAIL (an active user
of the tenant), within the deployments it asked for. The code expires 10 minutes after the device
showed it. --tenant defaults to the default tenant.

Example:
  npm run admin -- approve-device BCDF-GHJK --user ada@example.com --tenant acme`,
    options: { user: { type: 'string' }, tenant: { type: 'string' } },
    args: ['user code'],
    run: approveDevice,
  },
};

const OVERVIEW = `Usage: admin <command> [options]

Commands:
  tenant create <slug>            create a tenant, its first admin and API key
  tenant list                     list tenants and their hosts
  tenant add-domain <slug> <host> map a custom domain to a tenant
  tenant regions <slug> --regions NAMES | --all
                                  limit the regions a tenant's deployments may use
  key generate                    print a new key for ADMIN_API_KEY
  secrets re-encrypt              move every stored secret to the current secret key
  secrets generate-key            print a new key for MAPI_SECRET_KEY
  signing rotate --tenant SLUG    make a new key sign a tenant's tokens (the old one verifies a day more)
  approve-device <code> --user EMAIL [--tenant SLUG]
                                  approve a device sign-in as that user
  signing rotate --tenant SLUG [--purpose embed]
                                  make a new key sign a tenant's tokens (the old one verifies a day more)

Reads the server's environment (DATABASE_URL or DATA_DIR, BASE_DOMAIN, MAPI_SECRET_KEY).
Run "npm run admin -- <command> --help" for a command's options.
Exit status: 0 done; 2 a usage, configuration, tenant or secret-key error; 1 anything else (say, the database
cannot be reached). Every error is one line on stderr.

Example:
  npm run admin -- tenant create acme --domain analytics.acme.com`;

const COMMAND_LIST = `Commands: ${Object.keys(COMMANDS).join(', ')}; "npm run admin -- --help" explains them.`;

async function tenantCreate(ctx: Context, { values, positionals }: Parsed): Promise<void> {
  const slug = positionals[0] ?? '';
  const made = await createTenant(ctx.store, systemClock, {
    slug,
    name: values.name as string | undefined,
    domains: (values.domain as string[] | undefined) ?? [],
    adminEmail: (values['admin-email'] as string | undefined) ?? defaultAdminEmail(slug, ctx.config.baseDomain),
    baseDomain: ctx.config.baseDomain,
  });
  const hosts = tenantHosts(made.tenant, made.domains, ctx.config.baseDomain);
  ctx.out(`Created tenant ${made.tenant.slug} (id ${made.tenant.id}, name "${made.tenant.name}")`);
  ctx.out(
    `Hosts: ${hosts.length > 0 ? hosts.join(', ') : `(none: add one with "npm run admin -- tenant add-domain ${made.tenant.slug} HOST", or set BASE_DOMAIN)`}`,
  );
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

async function tenantRegionsCommand(ctx: Context, { values, positionals }: Parsed): Promise<void> {
  const slug = positionals[0] ?? '';
  const all = values.all === true;
  const list =
    typeof values.regions === 'string'
      ? values.regions
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean)
      : null;
  if (all === (list !== null)) throw new UsageError('Give --regions NAMES or --all, one of them.');
  const offered = ctx.config.catalog.regions.map((r) => r.name);
  const unknown = (list ?? []).filter((r) => !offered.includes(r));
  if (unknown.length > 0 || list?.length === 0)
    throw new UsageError(`Regions must be some of ${offered.join(', ')} (REGIONS); got ${unknown.join(', ') || 'none'}.`);
  const tenant = await findTenantBySlug(ctx.store.db, slug);
  if (!tenant) throw new TenantError(`Tenant "${slug}" does not exist.`);
  await setTenantRegions(ctx.store.db, tenant.id, list === null ? null : JSON.stringify(list));
  ctx.out(list === null ? `Tenant ${slug} may use every region (${offered.join(', ')}).` : `Tenant ${slug} may use ${list.join(', ')}.`);
}

async function tenantAddDomain(ctx: Context, { positionals }: Parsed): Promise<void> {
  const [slug = '', domain = ''] = positionals;
  const host = await addTenantDomain(ctx.store, systemClock, slug, domain, ctx.config.baseDomain);
  ctx.out(`Tenant ${slug} now answers on ${host}.`);
}

async function secretsReencrypt(ctx: Context): Promise<void> {
  const loaded = await loadSecretKeys(ctx.config.secretKeys);
  const report = await reencryptAll(ctx.store.db, new Secrets(loaded.keys, loaded.origin), SECRET_COLUMNS);
  const current = report.currentKeyId;
  for (const c of report.columns) {
    const meanwhile = c.changedMeanwhile > 0 ? `, ${c.changedMeanwhile} changed meanwhile (run again)` : '';
    ctx.out(`${c.column}: ${c.total} value(s); ${c.reencrypted} re-encrypted under key "${current}", ${c.alreadyCurrent} already under it${meanwhile}`);
  }
  if (report.retired.length > 0) ctx.out(`No value is left under key(s) ${report.retired.map((id) => `"${id}"`).join(', ')}: the database forgot them.`);
  for (const r of report.remaining)
    ctx.out(
      `Key "${r.keyId}" still encrypts ${r.count} value(s), written meanwhile by a server without the new key first: restart it with the new configuration and run this again.`,
    );
  if (report.remaining.length === 0) ctx.out(`Every stored secret is under key "${current}"; other keys (${loaded.origin}) may now be removed.`);
}

async function signingRotate(ctx: Context, { values }: Parsed): Promise<void> {
  const slug = values.tenant;
  if (typeof slug !== 'string' || slug === '') throw new UsageError('--tenant SLUG is required.');
  const purpose = values.purpose ?? 'default';
  if (purpose !== 'default' && purpose !== 'embed' && purpose !== 'workload') throw new UsageError('--purpose is `default`, `embed` or `workload`.');
  const tenant = await findTenantBySlug(ctx.store.db, slug);
  if (!tenant) throw new TenantError(`No tenant "${slug}"; "npm run admin -- tenant list" lists them.`);
  const secrets = await openSecrets(ctx.store, ctx.config.secretKeys);
  const publicUrl = new URL(ctx.config.publicUrl ?? `https://localhost:${ctx.config.port}`);
  const signing = new Signing(ctx.store, { secrets, issuerOf: tenantOrigin(ctx.store.db, { baseDomain: ctx.config.baseDomain, publicUrl: () => publicUrl }) });
  const { kid, retiredKid } = await signing.rotate({ id: tenant.id, slug: tenant.slug }, purpose);
  ctx.out(
    `Tenant ${slug} now signs ${purpose === 'embed' ? 'embed tokens' : purpose === 'workload' ? 'workload-identity tokens' : 'its tokens'} with key ${kid}.`,
  );
  ctx.out(
    retiredKid === null
      ? 'It had no key before.'
      : `Key ${retiredKid} verifies the tokens it signed until they expire, within a day; servers pick the new key up within a minute.`,
  );
}

async function approveDevice(ctx: Context, { values, positionals }: Parsed): Promise<void> {
  const email = values.user;
  if (typeof email !== 'string' || email === '') throw new UsageError('--user EMAIL is required.');
  const slug = typeof values.tenant === 'string' ? values.tenant : DEFAULT_TENANT_SLUG;
  const tenant = await findTenantBySlug(ctx.store.db, slug);
  if (!tenant) throw new TenantError(`No tenant "${slug}"; "npm run admin -- tenant list" lists them.`);
  const user = await findActiveUserIdByEmail(ctx.store.db, tenant.id, email);
  if (!user) throw new TenantError(`No active user "${email}" in tenant "${slug}".`);
  const secrets = await openSecrets(ctx.store, ctx.config.secretKeys);
  const publicUrl = new URL(ctx.config.publicUrl ?? `https://localhost:${ctx.config.port}`);
  const originOf = tenantOrigin(ctx.store.db, { baseDomain: ctx.config.baseDomain, publicUrl: () => publicUrl });
  const signing = new Signing(ctx.store, { secrets, issuerOf: originOf });
  const providers = new OAuthProviders(ctx.store.db, secrets, signing, originOf, () => undefined);
  try {
    const approved = await approveDeviceCode(ctx.store.db, providers, { id: tenant.id, slug: tenant.slug }, positionals[0] ?? '', user.id);
    const scope = approved.deploymentIds === null ? 'every deployment' : `deployments ${approved.deploymentIds.join(', ')}`;
    ctx.out(`Approved: the device signs in as ${email} (${scope}); it receives its tokens at its next poll.`);
  } catch (error) {
    if (error instanceof ApiError) throw new TenantError(error.detail);
    throw error;
  }
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
  // A one-word command (`approve-device <code>`) takes its first argument for a second word.
  const first = words[0] ?? '';
  if (!Object.hasOwn(COMMANDS, name) && words.length === 2 && Object.hasOwn(COMMANDS, first))
    return { name: first, command: COMMANDS[first], rest: argv.slice(1) };
  // Own keys only: `admin constructor` is an unknown command, not Object's constructor.
  return { name, command: Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined, rest: argv.slice(words.length) };
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
  let store: Store;
  try {
    store = storeFor(config);
  } catch (error) {
    throw databaseError(config, error);
  }
  try {
    try {
      await migrate(store);
    } catch (error) {
      throw databaseError(config, error);
    }
    await fn({ ...io, config, store });
  } finally {
    await store.close().catch(() => undefined);
  }
}

/** Where the database is, for a message: a PostgreSQL URL without its password. */
function databasePlace(config: Config): string {
  if (!config.databaseUrl) return `the SQLite database in ${config.dataDir} (DATA_DIR)`;
  try {
    const url = new URL(config.databaseUrl);
    url.password = '';
    url.search = '';
    return `the database at ${url.toString()} (DATABASE_URL)`;
  } catch {
    return 'the database named by DATABASE_URL';
  }
}

function databaseError(config: Config, error: unknown): DatabaseError {
  const check = config.databaseUrl
    ? 'check DATABASE_URL and that PostgreSQL is running and accepts connections'
    : 'check that DATA_DIR is a directory you can write to';
  return new DatabaseError(`Cannot ${config.databaseUrl ? 'reach' : 'open'} ${databasePlace(config)}: ${reason(error)}; ${check}.`);
}

/**
 * One line from any error: a multi-line message folded, and an empty one (Node's AggregateError
 * for a refused connection to several addresses has none) replaced by its code.
 */
function reason(error: unknown): string {
  const err = error as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
  let text = typeof err?.message === 'string' ? err.message : String(error);
  if (!text.trim() && Array.isArray(err?.errors) && err.errors.length > 0) text = reason(err.errors[0]);
  if (!text.trim()) text = typeof err?.code === 'string' ? err.code : 'unknown error';
  return text.replace(/\s*\n\s*/g, '; ').trim();
}

/** The first line of a command's usage, and where the rest is: a usage error stays short. */
function usageLine(name: string, command: Command): string {
  return `${command.usage.split('\n')[0]} ("npm run admin -- ${name} --help" for more)`;
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
    io.err(name === '' ? 'No command given.' : `Unknown command "${name}".`);
    io.err(COMMAND_LIST);
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
    if (error instanceof UsageError) {
      io.err(reason(error));
      io.err(usageLine(name, command));
    } else if (error instanceof ConfigError) io.err(`Invalid configuration: ${error.problems.join('; ')}`);
    else if (error instanceof TenantError || error instanceof SecretKeyError || error instanceof SecretsError) io.err(reason(error));
    else {
      io.err(error instanceof DatabaseError ? error.message : `admin ${name} failed: ${reason(error)}`);
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
  // A driver's late error (a pool's socket closing, say) would otherwise end in a stack trace.
  const crash = (error: unknown) => {
    process.stderr.write(`admin failed: ${reason(error)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  process.exitCode = await runAdmin(process.argv.slice(2));
}
