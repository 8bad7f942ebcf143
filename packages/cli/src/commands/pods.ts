import type { Command } from 'commander';
import type { DeploymentPod } from '@mapi/client';
import { run } from '../context.js';
import { parseId } from '../items.js';
import { writeJson, writeTable, type Column } from '../output.js';
import { coversEach } from '../operations.js';

const COLUMNS: Column<DeploymentPod>[] = [
  { header: 'NAME', value: (p) => p.name },
  { header: 'STATUS', value: (p) => p.status },
  { header: 'READY', value: (p) => (p.ready === null ? null : p.ready ? 'yes' : 'no') },
  { header: 'RESTARTS', value: (p) => p.restartCount, align: 'right' },
  { header: 'TYPE', value: (p) => p.type },
];

const HELP = `
One pod per environment that runs or ran: production once a build succeeded, staging branches,
developers in dev mode. STATUS is Pending, Running, CrashLoopBackOff (restarting after crashes in
a row, with back-off) or Terminated (suspended while idle, until its next use). \`mapi logs\` shows
what they print.

Examples:
  $ mapi pods 3
  $ mapi pods 3 --json | jq -r '.[] | select(.status != "Running") | .name'
`;

export function registerPods(program: Command): void {
  program
    .command('pods')
    .argument('<deploymentId>', 'deployment id')
    .description("The pods running a deployment's environments, with their status and restarts")
    .addHelpText('after', HELP)
    .action(
      run(async (context, deploymentArg: string) => {
        const deploymentId = parseId(deploymentArg, 'deploymentId');
        const pods = await context.client().pods.list(deploymentId);
        if (context.json) writeJson(pods);
        else writeTable(COLUMNS, pods, `No pods: deployment ${deploymentId} runs nothing yet (a pod starts once a build succeeds).`);
      }),
    );
  coversEach(program, { pods: ['listPods'] });
}
