import vm from 'node:vm';
import { modelError, type ModelError, type Position } from './errors.js';
import type { ModelFile } from './files.js';

const blank = (text: string) => text.replace(/[^\n]/g, ' ');

/**
 * JavaScript model files may be modules (`import { x } from './shared'`, `export const ...`),
 * which a script cannot contain. Their import and export declarations are blanked out, keeping
 * every other character where it was, so the rest is compiled as a script and any error is
 * reported at its true line and column.
 */
function asScript(source: string): string {
  if (!/^[ \t]*(import|export)\b/m.test(source)) return source;
  return source
    .replace(/^[ \t]*import\s*(?:[\w*\s{},$]*?\s*from\s*)?(['"])[^'"\n]*\1[ \t]*;?/gm, blank)
    .replace(/^[ \t]*export\s*(?:\*(?:\s*as\s+[\w$]+)?\s*from\s*(['"])[^'"\n]*\1|\{[^}]*\}(?:\s*from\s*(['"])[^'"\n]*\2)?)[ \t]*;?/gm, blank)
    .replace(/^([ \t]*)export\s+default\b/gm, (match, indent: string) => `${indent}void${' '.repeat(match.length - indent.length - 4)}`)
    .replace(/^([ \t]*)export(?=\s+(?:const|let|var|function|class|async)\b)/gm, (_match, indent: string) => `${indent}      `);
}

/** V8 puts "file:line", the source line and a caret under the error at the top of a SyntaxError's stack. */
function syntaxErrorPosition(error: Error): Position | undefined {
  const lines = (error.stack ?? '').split('\n');
  const line = Number(/:(\d+)$/.exec(lines[0] ?? '')?.[1]);
  const caret = lines[2]?.indexOf('^') ?? -1;
  if (!Number.isInteger(line) || line < 1) return undefined;
  return { line, column: caret >= 0 ? caret + 1 : 1 };
}

/**
 * A JavaScript model file is compiled, never run: `new vm.Script` parses the source and stops.
 * What its cubes define is only known by running it, which the build's runtime does.
 */
export function checkJsFile(file: ModelFile): ModelError[] {
  try {
    new vm.Script(asScript(file.content), { filename: file.path });
    return [];
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'SyntaxError') throw error;
    return [modelError(file.path, `JavaScript syntax error: ${error.message}`, syntaxErrorPosition(error))];
  }
}
