import fs from 'node:fs';
import { Command } from 'commander';
import { registerAgents } from './commands/agents.js';
import { registerAi } from './commands/ai.js';
import { registerApi } from './commands/api.js';
import { registerApiKeys } from './commands/api-keys.js';
import { registerAudit } from './commands/audit.js';
import { registerChat } from './commands/chat.js';
import { registerCompletion } from './commands/completion.js';
import { registerDashboards } from './commands/dashboards.js';
import { registerDbtSync } from './commands/dbt-sync.js';
import { registerDelete } from './commands/delete.js';
import { registerDeployments } from './commands/deployments.js';
import { registerEmbed } from './commands/embed.js';
import { registerEnvVars } from './commands/env-vars.js';
import { registerFolders } from './commands/folders.js';
import { registerGitCredential } from './commands/git-credential.js';
import { registerGitHost } from './commands/git-host.js';
import { registerLogin } from './commands/login.js';
import { registerLogs } from './commands/logs.js';
import { registerModel } from './commands/model.js';
import { registerMove } from './commands/move.js';
import { registerNotifications } from './commands/notifications.js';
import { registerPods } from './commands/pods.js';
import { registerReportDeliveries } from './commands/report-deliveries.js';
import { registerReports } from './commands/reports.js';
import { registerRoles } from './commands/roles.js';
import { registerSpec } from './commands/spec.js';
import { registerTasks } from './commands/tasks.js';
import { registerUsers } from './commands/users.js';
import { registerWorkbooks } from './commands/workbooks.js';
import { registerWorkspace } from './commands/workspace.js';
import { askBeforeDestructiveCommands } from './confirmation.js';
import { registerOperationCommands } from './operation-commands.js';

const HELP = `
Settings, each taken from the first place that has it: flags, then environment variables
(MAPI_URL, MAPI_TOKEN, MAPI_CA_CERT = path of a PEM file, MAPI_PROFILE), then the profile saved
by \`mapi login\`. MAPI_CONFIG_DIR moves the profile file (default: ~/.config/mapi/config.json,
$XDG_CONFIG_HOME/mapi, or %APPDATA%\\mapi on Windows).

Exit codes:
  0    success; also \`mapi logs --follow\` ended with Ctrl-C
  1    request-level error (refused, not found, unreachable; \`mapi api\`: any answer of 400 or
       above) or usage error (nothing sent); also a failed build (model push), an invalid model
       (model validate), a failed git clone (model clone), a failed send-now --wait, and "no"
       to a confirmation
  2    a bulk move or delete ran, but some items failed (see the failed table); also an
       embed users import in which some users failed
  130  interrupted with Ctrl-C (what was applied is still reported; \`mapi chat\` ended with it)
  143  a bulk move or delete, or a model push, stopped by SIGTERM (handled like Ctrl-C)

Examples:
  $ mapi login --url https://mapi.example.com
  $ mapi deployments list
  $ mapi folders tree 1
  $ mapi move 1 --to 12 folder:3 workbook:7
  $ mapi model push 1 ./analytics
  $ mapi logs 1 --follow
  $ mapi chat 1 "How many orders last week?"
  $ mapi --json users list
  $ mapi groups create --set name=Finance
  $ mapi policies list --json | jq '.items[].id'
  $ mapi api GET /api/v1/users/me
  $ mapi completion bash > ~/.local/share/bash-completion/completions/mapi
`;

/**
 * The whole command tree, built without parsing or running anything: main.ts parses it, and tests
 * walk it (every operation of the API reachable, every command described). A command module adds
 * itself with one `registerX(program)` line below.
 */
export function buildProgram(): Command {
  const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const program = new Command('mapi')
    .description('Administer a mapi management API server: deployments, folders, workspace moves, data models, agents, users and API keys.')
    .version(version, '-V, --version')
    .option('--url <url>', 'server URL, e.g. https://mapi.example.com (no /api/v1 suffix)')
    .option('--token <token>', 'API key (prefer MAPI_TOKEN or `mapi login`: flags show up in process lists)')
    .option('--ca-cert <file>', 'PEM file with the CA certificate to trust (self-signed servers)')
    .option('--profile <name>', 'profile saved by `mapi login` (default: "default", or MAPI_PROFILE)')
    .option('--json', 'print machine-readable JSON on stdout instead of tables and summaries')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText('after', HELP);

  registerLogin(program);
  registerDeployments(program);
  registerFolders(program);
  registerWorkspace(program);
  registerWorkbooks(program);
  registerDashboards(program);
  registerReports(program);
  registerMove(program);
  registerDelete(program);
  registerModel(program);
  registerGitHost(program);
  registerGitCredential(program);
  registerEnvVars(program);
  registerPods(program);
  registerDbtSync(program);
  registerNotifications(program);
  registerReportDeliveries(program);
  registerLogs(program);
  registerAgents(program);
  registerChat(program);
  registerTasks(program);
  registerUsers(program);
  registerApiKeys(program);
  registerRoles(program);
  registerAudit(program);
  registerEmbed(program);
  registerAi(program);
  registerSpec(program);
  registerApi(program);
  registerCompletion(program);
  // Last: the generated commands join the groups the modules above made, and cover what they leave.
  registerOperationCommands(program);
  askBeforeDestructiveCommands(program);
  return program;
}
