import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { unwrap } from '@mapi/client';
import { run } from '../context.js';
import { note, plural, writeJson } from '../output.js';
import { coversEach } from '../operations.js';

export function registerSpec(program: Command): void {
  program
    .command('spec')
    .option('-o, --output <file>', 'write the document to this file instead of stdout')
    .description('Print the OpenAPI document the server serves (GET /api/v1/spec)')
    .addHelpText('after', '\nExamples:\n  $ mapi spec > openapi.json\n  $ mapi spec --output openapi.json\n')
    .action(
      run(async (context, options: { output?: string }) => {
        const spec = unwrap(await context.client().GET('/api/v1/spec')) as { info?: { title?: string; version?: string }; paths?: object };
        if (!options.output) {
          writeJson(spec);
          return;
        }
        const file = path.resolve(options.output);
        fs.writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
        const paths = Object.keys(spec.paths ?? {}).length;
        // On stderr: stdout stays empty, as with any command whose result went to a file.
        note(`Saved the OpenAPI document (${spec.info?.title ?? 'untitled'} ${spec.info?.version ?? ''}, ${plural(paths, 'path')}) to ${file}.`);
      }),
    );
  coversEach(program, { spec: ['getSpec'] });
}
