import { EXIT } from './errors.js';
import { buildProgram } from './program.js';

// Writing to a closed pipe (`mapi ... | head`) is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.OK);
  throw error;
});

await buildProgram().parseAsync(process.argv);
