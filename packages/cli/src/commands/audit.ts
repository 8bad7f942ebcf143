import type { Command } from 'commander';
import type { AuditEvent, AuditEventListQuery } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** At most this many events unless `--limit` says otherwise; the log of a busy account is long. */
export const DEFAULT_LIMIT = 50;

export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 100_000) throw new UsageError(`--limit must be a whole number from 1 to 100000, got "${value}".`);
  return n;
}

export function parseInstant(value: string, flag: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new UsageError(`${flag} must be a date or time such as 2026-11-26 or 2026-11-26T14:00:00Z, got "${value}".`);
  return new Date(ms).toISOString();
}

function parseMethod(value: string): Method {
  const method = value.toUpperCase();
  if (!METHODS.includes(method as Method)) throw new UsageError(`--method must be one of ${METHODS.join(', ')}, got "${value}".`);
  return method as Method;
}

/** What the event was about: the request line for a request, the event's name otherwise. */
export function describeEvent(e: AuditEvent): string {
  const target = Object.entries(e.target)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(' ');
  const what = e.action === 'request' ? `${e.method ?? ''} ${e.route ?? ''}` : e.action;
  return target === '' ? what : `${what} ${target}`;
}

const COLUMNS: Column<AuditEvent>[] = [
  { header: 'TIME', value: (e) => e.occurredAt },
  { header: 'ACTOR', value: (e) => e.actorEmail ?? (e.actorUserId === null ? null : String(e.actorUserId)) },
  { header: 'CREDENTIAL', value: (e) => (e.credentialKind === null ? null : `${e.credentialKind}${e.credentialId === null ? '' : ` ${e.credentialId}`}`) },
  { header: 'STATUS', value: (e) => e.status, align: 'right' },
  { header: 'EVENT', value: describeEvent },
];

const HELP = `
The account's audit log, newest first: every mutating request (method, route, the ids in its path,
the status it was answered with) and events such as env-var reads (env-vars.read) and data-API token
issuance (token.issued). Recorded only while the tenant setting auditLogEnabled is on. Needs an
admin key. Never shows request bodies or secrets.

Examples:
  $ mapi audit
  $ mapi audit --actor 12 --since 2026-11-01
  $ mapi audit --action env-vars.read --limit 500 --json
  $ mapi audit --route /api/v1/deployments/:deploymentId/env-vars --method PUT
`;

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description("The account's audit log, newest first (admin key needed)")
    .option('--actor <userId>', 'only events of this user id')
    .option('--action <name>', 'only events of this action: request, env-vars.read, token.issued, …')
    .option('--route <pattern>', 'only requests to this route pattern')
    .option('--method <method>', `only requests of this method (${METHODS.join(', ')})`)
    .option('--since <time>', 'only events at or after this time')
    .option('--until <time>', 'only events at or before this time')
    .option('--limit <n>', `at most this many events (default ${DEFAULT_LIMIT})`)
    .addHelpText('after', HELP)
    .action(
      run(async (context, options: { actor?: string; action?: string; route?: string; method?: string; since?: string; until?: string; limit?: string }) => {
        const limit = parseLimit(options.limit);
        const query: AuditEventListQuery = {
          first: Math.min(limit, 200),
          ...(options.actor !== undefined ? { actorUserId: parseId(options.actor, '--actor') } : {}),
          ...(options.action !== undefined ? { action: options.action } : {}),
          ...(options.route !== undefined ? { route: options.route } : {}),
          ...(options.method !== undefined ? { method: parseMethod(options.method) } : {}),
          ...(options.since !== undefined ? { since: parseInstant(options.since, '--since') } : {}),
          ...(options.until !== undefined ? { until: parseInstant(options.until, '--until') } : {}),
        };
        const events: AuditEvent[] = [];
        for await (const event of context.client().auditEvents.list(query)) {
          events.push(event);
          if (events.length >= limit) break;
        }
        if (context.json) writeJson(events);
        else writeTable(COLUMNS, events, 'No audit events match (the log records only while the tenant setting auditLogEnabled is on).');
      }),
    );
  coversEach(program, { audit: ['listAuditEvents'] });
}
