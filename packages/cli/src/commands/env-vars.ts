import type { Command } from 'commander';
import { unwrap } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId, readStdin } from '../items.js';
import { note, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

interface EnvVariable {
  name: string;
  value: string;
}

const COLUMNS: Column<EnvVariable>[] = [
  { header: 'NAME', value: (v) => v.name },
  { header: 'VALUE', value: (v) => v.value },
];

/**
 * `NAME=VALUE` arguments, then `NAME=VALUE` lines from stdin with `--stdin` (so secret values stay
 * out of the shell history and the process list). The first `=` splits; a value may hold more.
 */
export function parseAssignments(args: string[], stdinText: string | null): EnvVariable[] {
  const lines = [...args, ...(stdinText === null ? [] : stdinText.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#')))];
  if (lines.length === 0) throw new UsageError('Give at least one NAME=VALUE (or lines of them on stdin with --stdin).');
  return lines.map((line) => {
    const at = line.indexOf('=');
    if (at <= 0) throw new UsageError(`"${line.length > 40 ? `${line.slice(0, 40)}…` : line}" is not NAME=VALUE.`);
    return { name: line.slice(0, at), value: line.slice(at + 1) };
  });
}

export function registerEnvVars(program: Command): void {
  const vars = program.command('env-vars').description("A deployment's environment variables (values of secret-looking names read back as [ENCRYPTED])");
  vars.addHelpText(
    'after',
    '\nExamples:\n  $ mapi env-vars list 3\n  $ mapi env-vars set 3 WAREHOUSE_HOST=db.internal WAREHOUSE_USER=etl\n  $ mapi env-vars set 3 --stdin < secrets.env\n  $ mapi env-vars delete 3 OLD_NAME\n',
  );

  vars
    .command('list <deploymentId>')
    .alias('ls')
    .description('List the variables, secret values masked')
    .addHelpText('after', '\nExamples:\n  $ mapi env-vars list 3\n  $ mapi env-vars list 3 --json\n')
    .action(
      run(async (context, deploymentArg: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const client = context.client();
        const rows: EnvVariable[] = [];
        let after: string | undefined;
        do {
          const page = unwrap(
            await client.GET('/api/v1/deployments/{deploymentId}/env-vars', {
              params: { path: { deploymentId }, query: { first: 200, ...(after ? { after } : {}) } },
            }),
          );
          rows.push(...page.items);
          after = page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? undefined) : undefined;
        } while (after !== undefined);
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No environment variables.');
      }),
    );

  vars
    .command('set <deploymentId> [assignments...]')
    .option('--stdin', 'also read NAME=VALUE lines from stdin (blank lines and # comments skipped)')
    .description('Create or overwrite variables; the others keep their values')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi env-vars set 3 WAREHOUSE_HOST=db.internal\n  $ mapi env-vars set 3 --stdin < secrets.env   # values stay out of the shell history\n',
    )
    .action(
      run(async (context, deploymentArg: string, assignments: string[], options: { stdin?: boolean }) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const variables = parseAssignments(assignments, options.stdin ? await readStdin() : null);
        unwrap(
          await context.client().PUT('/api/v1/deployments/{deploymentId}/env-vars', { params: { path: { deploymentId } }, body: { env_variables: variables } }),
        );
        if (context.json) writeJson({ set: variables.map((v) => v.name) });
        else
          note(
            `Set ${variables.length} variable${variables.length === 1 ? '' : 's'} on deployment ${deploymentId}: ${variables.map((v) => v.name).join(', ')}.`,
          );
      }),
    );

  vars
    .command('delete <deploymentId> <name>')
    .alias('rm')
    .description('Remove a variable')
    .addHelpText('after', '\nExamples:\n  $ mapi env-vars delete 3 OLD_NAME\n')
    .action(
      run(async (context, deploymentArg: string, name: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        unwrap(await context.client().DELETE('/api/v1/deployments/{deploymentId}/env-vars/{name}', { params: { path: { deploymentId, name } } }));
        if (context.json) writeJson({ deleted: name });
        else note(`Removed ${name} from deployment ${deploymentId}.`);
      }),
    );
  coversEach(vars, { list: ['listEnvVariables'], set: ['setEnvVariables'], delete: ['deleteEnvVariable'] });
}
