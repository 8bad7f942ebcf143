import { fileURLToPath } from 'node:url';

/**
 * The runtime program's file, for the process driver: the compiled `main.js` beside this module
 * when the server runs from its build, `main.ts` when it runs from its sources (tests, through tsx).
 */
export const RUNTIME_ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url));
