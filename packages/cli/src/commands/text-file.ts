import fs from 'node:fs';
import type { Command } from 'commander';
import type { MapiClient, TextEditInput, TextFiles } from '@mapi/client';
import { run } from '../context.js';
import { UsageError } from '../errors.js';
import { parseId } from '../items.js';
import { note, write, writeJson } from '../output.js';

/** A document kind edited as canonical text: which helper of the client, and how its id is named. */
interface TextDocument {
  /** `report` or `workbook`: the id argument's name. */
  idName: string;
  /** What the document is, for the commands' descriptions. */
  what: string;
  /** How a message names the document. */
  label: (id: number) => string;
  files: (client: MapiClient) => TextFiles;
}

const EDIT_HELP = `
Saves an edit of the text that \`file\` prints (JSON with sorted keys). Either replace exact text
(--old and --new: the old text must occur exactly once) or the whole text (--from FILE, - for
stdin). With --hash (from \`file --json\`), the edit applies only if nobody changed the text since
you read it; a changed text is refused (exit 1) and nothing is written. Without --hash, the text
as it is now is edited. An invalid result is refused with the part of the text that is wrong.
`;

function readText(file: string): string {
  try {
    return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`);
  }
}

/** Adds `<name>` (print the text) and `<name>-edit` (save an edit) under `parent`. */
export function registerTextFileCommands(parent: Command, name: string, document: TextDocument, examples: string): void {
  parent
    .command(name)
    .argument('<deploymentId>', 'deployment id')
    .argument(`<${document.idName}Id>`, `${document.idName} id`)
    .description(`Print the ${document.what} as canonical text (--json: with its hash)`)
    .addHelpText('after', `\nExamples:\n${examples}`)
    .action(
      run(async (context, deployment: string, idArg: string) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const id = parseId(idArg, `${document.idName}Id`);
        const file = await document.files(context.client()).get(deploymentId, id);
        if (context.json) writeJson(file);
        else process.stdout.write(file.content);
      }),
    );

  parent
    .command(`${name}-edit`)
    .argument('<deploymentId>', 'deployment id')
    .argument(`<${document.idName}Id>`, `${document.idName} id`)
    .option('--old <text>', 'exact text to replace (with --new)')
    .option('--new <text>', 'what replaces it (with --old)')
    .option('--from <file>', 'replace the whole text by this file’s (- for stdin)')
    .option('--hash <hash>', 'the hash the edit was made against (from --json); left out: the current text')
    .description(`Save an exact-text edit of the ${document.what}`)
    .addHelpText('after', `${EDIT_HELP}\nExamples:\n${examples}`)
    .action(
      run(async (context, deployment: string, idArg: string, options: { old?: string; new?: string; from?: string; hash?: string }) => {
        const deploymentId = parseId(deployment, 'deploymentId');
        const id = parseId(idArg, `${document.idName}Id`);
        const exact = options.old !== undefined || options.new !== undefined;
        if (exact === (options.from !== undefined)) throw new UsageError('Give either --old and --new, or --from.');
        if (exact && (options.old === undefined || options.new === undefined)) throw new UsageError('--old and --new go together.');
        const files = document.files(context.client());
        const current = options.hash === undefined || options.from !== undefined ? await files.get(deploymentId, id) : undefined;
        const hash = options.hash ?? current!.hash;
        const input: TextEditInput = exact
          ? { hash, edits: [{ oldText: options.old!, newText: options.new! }] }
          : { hash, edits: [{ oldText: current!.content, newText: readText(options.from!) }] };
        const saved = await files.edit(deploymentId, id, input);
        if (context.json) {
          writeJson(saved);
          return;
        }
        write(`Saved ${document.label(id)}; its hash is now ${saved.hash}.`);
        if (saved.hash === hash) note('The edit left the same text: nothing changed.');
      }),
    );
}
