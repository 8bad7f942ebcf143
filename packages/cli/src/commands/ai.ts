import type { Command } from 'commander';
import type { AiSettings, AiUsageRow, UpdateAiSettingsInput } from '@mapi/client';
import { run, type Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readFields } from '../input-file.js';
import { readStdin } from '../items.js';
import { all, note, write, writeJson, writeTable, type Column } from '../output.js';
import { askSecret, canPromptSecret } from '../prompt.js';
import { coversEach } from '../operations.js';

const HELP = `
The account's AI settings (admin): whether AI features are on, the model provider they call (an
OpenAI-compatible chat-completions API), and how far one answer and one user may go. \`set\` changes
only what its flags (or --file, JSON or YAML) name; a change needs an unscoped key. The provider's
key is read from stdin with --api-key-stdin (hidden on a terminal), never from a flag.

Examples:
  $ mapi ai settings
  $ mapi ai settings set --enabled
  $ mapi ai settings set --provider-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-stdin < openai.key
  $ mapi ai settings set --tokens-per-user-per-month 200000
  $ mapi ai usage --month 2026-11
`;

const number = (n: number) => n.toLocaleString('en-US');

function describeSettings(settings: AiSettings): string {
  const { provider, limits } = settings;
  const source = provider?.source === 'account' ? "the account's own" : "the server's default (AI_PROVIDER_URL)";
  return [
    `AI features   ${settings.enabled ? 'on' : 'off'}`,
    `Provider      ${provider === null ? 'none configured' : `${provider.baseUrl}, model ${provider.model}, ${provider.apiKeySet ? 'key set' : 'no key'} (${source})`}`,
    `Per answer    at most ${number(limits.maxTokensPerAnswer)} tokens and ${number(limits.maxToolCallsPerAnswer)} tool calls`,
    `Per user      ${limits.tokensPerUserPerMonth === null ? 'no monthly budget' : `${number(limits.tokensPerUserPerMonth)} tokens a month (UTC)`}`,
  ].join('\n');
}

interface SetFlags {
  file?: string;
  enabled?: boolean;
  disabled?: boolean;
  providerUrl?: string;
  model?: string;
  apiKeyStdin?: boolean;
  apiKey?: boolean;
  removeProvider?: boolean;
  maxTokensPerAnswer?: string;
  maxToolCallsPerAnswer?: string;
  tokensPerUserPerMonth?: string;
}

function whole(value: string, flag: string): number {
  if (!/^[0-9]+$/.test(value.replace(/[_,]/g, ''))) throw new UsageError(`${flag} must be a whole number, got "${value}".`);
  return Number(value.replace(/[_,]/g, ''));
}

async function settingsInput(context: Context, options: SetFlags): Promise<UpdateAiSettingsInput> {
  const input = (options.file !== undefined ? readFields(options.file) : {}) as UpdateAiSettingsInput & Record<string, unknown>;
  if (options.enabled && options.disabled) throw new UsageError('Give --enabled or --disabled, not both.');
  if (options.enabled) input.enabled = true;
  if (options.disabled) input.enabled = false;

  const providerFlags = options.providerUrl !== undefined || options.model !== undefined || options.apiKeyStdin || options.apiKey === false;
  if (options.removeProvider && providerFlags) throw new UsageError('--remove-provider drops the provider: leave out the other provider flags.');
  if (options.apiKeyStdin && options.apiKey === false) throw new UsageError('Give --api-key-stdin or --no-api-key, not both.');
  if (options.removeProvider) input.provider = null;
  else if (providerFlags) {
    // The server takes the provider whole; a flag left out keeps the account's current value.
    const current = (await context.client().ai.settings()).provider;
    const baseUrl = options.providerUrl ?? current?.baseUrl;
    const model = options.model ?? current?.model;
    if (baseUrl === undefined || model === undefined) throw new UsageError('No provider is configured yet: give both --provider-url and --model.');
    const provider: NonNullable<UpdateAiSettingsInput['provider']> = { baseUrl, model };
    if (options.apiKey === false) provider.apiKey = null;
    if (options.apiKeyStdin) {
      const key = canPromptSecret() ? await askSecret('Provider API key (input hidden): ') : (await readStdin()).trim();
      if (key === '')
        throw new UsageError(
          '--api-key-stdin read an empty key.',
          'Pipe the key in, e.g. `--api-key-stdin < provider.key`, or use --no-api-key for a provider that asks for none.',
        );
      provider.apiKey = key;
    }
    input.provider = provider;
  }

  const limits: NonNullable<UpdateAiSettingsInput['limits']> = { ...(input.limits ?? {}) };
  if (options.maxTokensPerAnswer !== undefined) limits.maxTokensPerAnswer = whole(options.maxTokensPerAnswer, '--max-tokens-per-answer');
  if (options.maxToolCallsPerAnswer !== undefined) limits.maxToolCallsPerAnswer = whole(options.maxToolCallsPerAnswer, '--max-tool-calls-per-answer');
  if (options.tokensPerUserPerMonth !== undefined)
    limits.tokensPerUserPerMonth = options.tokensPerUserPerMonth === 'none' ? null : whole(options.tokensPerUserPerMonth, '--tokens-per-user-per-month');
  if (Object.keys(limits).length > 0) input.limits = limits;
  return input;
}

interface UsageLine extends AiUsageRow {
  who: string;
}

const USAGE_COLUMNS: Column<UsageLine>[] = [
  { header: 'WHO', value: (r) => r.who },
  { header: 'PROMPT', value: (r) => number(r.promptTokens), align: 'right' },
  { header: 'COMPLETION', value: (r) => number(r.completionTokens), align: 'right' },
  { header: 'TOTAL', value: (r) => number(r.promptTokens + r.completionTokens), align: 'right' },
  { header: 'ANSWERS', value: (r) => r.answers, align: 'right' },
];

export function registerAi(program: Command): void {
  const ai = program.command('ai').description("The account's AI settings and what each user spent (admin)");
  ai.addHelpText('after', HELP);

  const settings = ai.command('settings').description('Show or change the AI settings (no subcommand: show them)');
  settings.addHelpText('after', HELP);
  settings
    .command('get', { isDefault: true })
    .description('Show the AI settings, defaults applied')
    .addHelpText('after', '\nExamples:\n  $ mapi ai settings\n  $ mapi ai settings get --json\n')
    .action(
      run(async (context) => {
        const current = await context.client().ai.settings();
        if (context.json) writeJson(current);
        else write(describeSettings(current));
      }),
    );
  settings
    .command('set')
    .option('--file <file>', 'the change as JSON or YAML (- reads stdin), as PUT /api/v1/ai/settings takes it; flags win over it')
    .option('--enabled', 'turn AI features on for the account')
    .option('--disabled', 'turn AI features off')
    .option('--provider-url <url>', "the provider's API root, e.g. https://api.openai.com/v1 (not its /chat/completions URL)")
    .option('--model <name>', 'the model to ask for')
    .option('--api-key-stdin', "read the provider's key from stdin (hidden on a terminal)")
    .option('--no-api-key', 'store no key (a local server that asks for none)')
    .option('--remove-provider', "drop the account's own provider; the server's default applies again")
    .option('--max-tokens-per-answer <n>', 'the most tokens one answer may write (16 to 1,000,000)')
    .option('--max-tool-calls-per-answer <n>', 'the most tool calls one answer may make (0 to 100)')
    .option('--tokens-per-user-per-month <n>', 'the monthly budget of each user, or "none"')
    .description('Change some AI settings: only what the flags name changes')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mapi ai settings set --enabled --tokens-per-user-per-month 200000\n  $ mapi ai settings set --provider-url http://127.0.0.1:11434/v1 --model llama3.1 --no-api-key\n  $ mapi ai settings set --remove-provider\n',
    )
    .action(
      run(async (context, options: SetFlags) => {
        const input = await settingsInput(context, options);
        if (Object.keys(input).length === 0)
          throw new UsageError('Nothing to change: give a flag such as --enabled, or --file.', 'See `mapi ai settings set --help`.');
        const updated = await context.client().ai.updateSettings(input);
        if (context.json) writeJson(updated);
        else {
          note('Updated the AI settings.');
          write(describeSettings(updated));
        }
      }),
    );

  ai.command('usage')
    .option('--month <YYYY-MM>', 'a calendar month (UTC); default the current one')
    .description('Tokens and answers per user and embed user in a month, most tokens first')
    .addHelpText('after', '\nExamples:\n  $ mapi ai usage\n  $ mapi ai usage --month 2026-11 --json\n')
    .action(
      run(async (context, options: { month?: string }) => {
        if (options.month !== undefined && !/^[0-9]{4}-(0[1-9]|1[0-2])$/.test(options.month))
          throw new UsageError(`--month must be YYYY-MM, e.g. 2026-11, got "${options.month}".`);
        const client = context.client();
        const usage = await client.ai.usage(options.month !== undefined ? { month: options.month } : {});
        if (context.json) return writeJson(usage);
        // Emails read better than ids; the usage is admin-only, and so is the user list.
        const emails = new Map<number, string>();
        if (usage.items.some((r) => r.userId !== null)) for (const user of await all(client.users.list())) emails.set(user.id, user.email);
        const rows = usage.items.map((r) => ({
          ...r,
          who: r.userId !== null ? (emails.get(r.userId) ?? `user ${r.userId}`) : `embed user ${r.embedUserId}`,
        }));
        note(`${usage.month}: ${usage.limit === null ? 'no monthly budget per user' : `a budget of ${number(usage.limit)} tokens per user`}.`);
        writeTable(USAGE_COLUMNS, rows, `No AI answers in ${usage.month}.`);
      }),
    );
  coversEach(ai, { 'settings get': ['getAiSettings'], 'settings set': ['getAiSettings', 'updateAiSettings'], usage: ['getAiUsage', 'listUsers'] });
}
