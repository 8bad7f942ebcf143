import type { Command } from 'commander';
import { unwrap, type Deployment } from '@mapi/client';
import { run } from '../context.js';
import { all, shortDate, write, writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const COLUMNS: Column<Deployment>[] = [
  { header: 'ID', value: (d) => d.id, align: 'right' },
  { header: 'NAME', value: (d) => d.name },
  // Null access means the caller only reaches items inside the deployment, not the deployment itself.
  { header: 'ACCESS', value: (d) => d.access ?? 'items only' },
  { header: 'STEP', value: (d) => d.creationStep },
  { header: 'CREATED', value: (d) => shortDate(d.createdAt) },
];

export function registerDeployments(program: Command): void {
  const deployments = program.command('deployments').description('Deployments you can see');
  deployments.addHelpText('after', '\nExamples:\n  $ mapi deployments list\n  $ mapi deployments create "Analytics"\n');

  deployments
    .command('list')
    .alias('ls')
    .description('List the deployments your key can see, with your access to each')
    .addHelpText('after', '\nExamples:\n  $ mapi deployments list\n  $ mapi deployments list --json | jq ".[].id"\n')
    .action(
      run(async (context) => {
        const rows = await all(context.client().deployments.list());
        if (context.json) writeJson(rows);
        else writeTable(COLUMNS, rows, 'No deployments visible to this key.');
      }),
    );

  deployments
    .command('create')
    .argument('<name>', 'deployment name')
    .description('Create a deployment (POST /build/api/v1/deployments/); you get full access to it')
    .addHelpText('after', '\nExamples:\n  $ mapi deployments create "Analytics"\n  $ mapi deployments create "Staging" --json | jq .id\n')
    .action(
      run(async (context, name: string) => {
        const deployment = unwrap(await context.client().POST('/build/api/v1/deployments/', { body: { name } }));
        if (context.json) writeJson(deployment);
        else write(`Created deployment "${deployment.name}" (id ${deployment.id}).`);
      }),
    );
  coversEach(deployments, { list: ['listDeployments'], create: ['createDeployment'] });
}
