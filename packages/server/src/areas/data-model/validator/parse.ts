import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { modelError, type ModelError, type Position } from './errors.js';
import type { ModelFile } from './files.js';

/** Where a value sits in a file's data: keys and list indexes from the top, as Ajv's instance paths give them. */
export type Path = ReadonlyArray<string | number>;

/** A YAML model file read once: its data for the checks, its document and line table for the positions of errors. */
export interface ParsedFile {
  path: string;
  content: string;
  doc: Document.Parsed;
  lineCounter: LineCounter;
  value: unknown;
}

/**
 * Parses with the line table filled in as the lexer goes, so no error position needs a second
 * pass over the text. Syntax errors come with the position the yaml package gives them.
 */
export function parseYamlFile(file: ModelFile): { parsed: ParsedFile | null; errors: ModelError[] } {
  const lineCounter = new LineCounter();
  // Merge keys (`<<: *defaults`) are YAML 1.1, which the semantic layer's YAML reader accepts; so do we.
  const doc = parseDocument(file.content, { lineCounter, merge: true });
  if (doc.errors.length > 0) {
    const errors = doc.errors.map((error) => {
      const at = error.linePos?.[0];
      return modelError(file.path, `YAML syntax error: ${firstLine(error.message)}`, at ? { line: at.line, column: at.col } : undefined);
    });
    return { parsed: null, errors };
  }
  return { parsed: { path: file.path, content: file.content, doc, lineCounter, value: doc.toJS() }, errors: [] };
}

/** The yaml package appends " at line L, column C:" and a code frame; the position is reported apart. */
function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

export interface LocateOptions {
  /** Point at the key of the last step (an unknown key) rather than at its value. */
  key?: boolean;
  /** Point at this text inside the value (a reference inside an SQL expression), where it appears. */
  text?: string;
}

/**
 * The line and column of the node at `path`, found by walking the document's nodes: only ever
 * done for an error, so the checks themselves work on plain data. A path that leaves the
 * document (a key that is missing) stops at the deepest node that exists.
 */
export function locate(file: ParsedFile, path: Path, options: LocateOptions = {}): Position {
  let node: unknown = file.doc.contents;
  let keyNode: Node | null = null;
  for (const step of path) {
    if (isAlias(node)) node = node.resolve(file.doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(step));
      if (!pair) break;
      keyNode = pair.key as Node;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof step === 'number' && node.items[step]) {
      keyNode = null;
      node = node.items[step];
    } else {
      break;
    }
  }
  const target = options.key && keyNode ? keyNode : (node as Node | null);
  const range = target?.range;
  if (!range) return { line: 1, column: 1 };
  let offset = range[0];
  if (options.text) {
    const found = file.content.slice(range[0], range[1]).indexOf(options.text);
    if (found >= 0) offset += found;
  }
  const { line, col } = file.lineCounter.linePos(offset);
  return { line, column: col };
}
