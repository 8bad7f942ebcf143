import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { modelError, type ModelError, type Position } from './errors.js';
import { MAX_MODEL_FILE_BYTES, type ModelFile } from './files.js';

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
 * The bounds of a YAML model file. Files reach the validator from the files API (which already
 * caps a file at MAX_FILE_BYTES) and from git pushes (which do not), so the parser checks again.
 * A model nests a handful of levels (file, cubes, a cube, its members, a member, a filter list);
 * MAX_YAML_DEPTH leaves room for that many times over. Deeper input is refused before the yaml
 * package sees it: its parser recurses per level, and a megabyte of `[` or `- ` takes it tens of
 * seconds or the whole heap. MAX_YAML_ALIASES is how many alias expansions one file may make
 * (the yaml package's default, named here so it is not lost): aliases of aliases grow
 * exponentially, the "billion laughs".
 */
export const MAX_YAML_BYTES = MAX_MODEL_FILE_BYTES;
export const MAX_YAML_DEPTH = 64;
export const MAX_YAML_ALIASES = 100;
/** Columns of indentation plus compact indicators (`- - -`) on one line: a cheap upper bound of block depth, checked before parsing. */
const MAX_LINE_NESTING = 4 * MAX_YAML_DEPTH;

/**
 * Parses with the line table filled in as the lexer goes, so no error position needs a second
 * pass over the text. Syntax errors come with the position the yaml package gives them. Bounds
 * (size, depth, aliases) and tags the semantic layer's reader would not know are errors of the
 * file like any other, so a validation or build reports them and changes nothing.
 */
export function parseYamlFile(file: ModelFile): { parsed: ParsedFile | null; errors: ModelError[] } {
  const bytes = Buffer.byteLength(file.content, 'utf8');
  if (bytes > MAX_YAML_BYTES) return refused(file, `The file is ${bytes} bytes; a model file may hold at most ${MAX_YAML_BYTES}.`);
  const nesting = textNesting(file.content);
  if (nesting) return refused(file, `The file nests deeper than ${MAX_YAML_DEPTH} levels, the most a YAML model file may.`, nesting);
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
  // The core schema reads no `!!js/function`, `!!binary` or custom tag; it keeps such a value as a
  // string with a warning. The semantic layer's reader rejects them, so the file is an error here.
  const tags = doc.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED');
  if (tags.length > 0) {
    return {
      parsed: null,
      errors: tags.map((warning) => modelError(file.path, `YAML tag not allowed: ${firstLine(warning.message)}`, positionOf(warning.linePos))),
    };
  }
  const deep = nodeDeeperThan(doc.contents, MAX_YAML_DEPTH);
  if (deep)
    return refused(file, `The file nests deeper than ${MAX_YAML_DEPTH} levels, the most a YAML model file may.`, lineCounter.linePos(deep.range?.[0] ?? 0));
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    // The yaml package throws a ReferenceError when aliases expand past maxAliasCount.
    return refused(file, `YAML aliases expand too far (${firstLine((error as Error).message)}); a file may expand at most ${MAX_YAML_ALIASES} aliases.`);
  }
  return { parsed: { path: file.path, content: file.content, doc, lineCounter, value }, errors: [] };
}

function refused(file: ModelFile, message: string, at?: { line: number; col: number }): { parsed: null; errors: ModelError[] } {
  return { parsed: null, errors: [modelError(file.path, message, at ? { line: at.line, column: at.col } : undefined)] };
}

function positionOf(linePos: ReadonlyArray<{ line: number; col: number }> | undefined): Position | undefined {
  const at = linePos?.[0];
  return at ? { line: at.line, column: at.col } : undefined;
}

/**
 * Where the text nests too deep to hand to the parser, or null. An upper bound, never an
 * underestimate, found in one pass: flow collections (`[`, `{` at the start of a node, outside
 * quotes and comments: in flow context a plain scalar cannot hold a bracket) plus, per line, the
 * columns of indentation and the compact block indicators (`- `, `? `, `: `) before its content.
 * A bracket inside a block scalar's text may count where YAML would not: that only refuses
 * sooner, and a model has no reason to open dozens of them.
 */
function textNesting(text: string): { line: number; col: number } | null {
  let flow = 0;
  let quote: '"' | "'" | null = null;
  let line = 1;
  let lineStart = 0;
  let block = 0; // indentation and indicators seen since the line began, until its content
  let atLineHead = true;
  let nodeStart = true; // the next character may begin a node: a quote or bracket there is an indicator
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      block = 0;
      atLineHead = true;
      nodeStart = true;
      // A quoted scalar outside a flow collection is taken to end at its line: were it to go on,
      // counting the brackets after it can only overestimate.
      if (flow === 0) quote = null;
      continue;
    }
    if (quote) {
      if (quote === '"' && c === '\\') i++;
      else if (c === quote) {
        if (quote === "'" && text[i + 1] === "'") i++;
        else quote = null;
      }
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      if (atLineHead) block++;
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    if ((c === '-' || c === '?' || c === ':') && (i + 1 === text.length || /\s/.test(text[i + 1]!))) {
      if (atLineHead && c !== ':') block++;
      nodeStart = true;
      if (block + flow > MAX_LINE_NESTING) return { line, col: i - lineStart + 1 };
      continue;
    }
    atLineHead = false;
    // An anchor or a tag (`&a`, `!!str`) comes before its node: what follows it still starts one.
    if ((c === '&' || c === '!') && nodeStart) {
      while (i + 1 < text.length && !/[\s,[\]{}]/.test(text[i + 1]!)) i++;
      continue;
    }
    if ((c === '"' || c === "'") && nodeStart) {
      quote = c;
      continue;
    }
    if ((c === '[' || c === '{') && (nodeStart || flow > 0)) {
      flow++;
      if (flow > MAX_YAML_DEPTH || block + flow > MAX_LINE_NESTING) return { line, col: i - lineStart + 1 };
      nodeStart = true;
      continue;
    }
    if ((c === ']' || c === '}') && flow > 0) {
      flow--;
      nodeStart = false;
      continue;
    }
    nodeStart = c === ',' && flow > 0;
  }
  return null;
}

/** The first node deeper than `limit` collections, walked without recursion; aliases are not followed (toJS bounds them). */
function nodeDeeperThan(root: unknown, limit: number): Node | null {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (isMap(node) || isSeq(node)) {
      if (depth + 1 > limit) return node;
      for (const item of node.items) {
        if (isPair(item)) {
          stack.push([item.key, depth + 1], [item.value, depth + 1]);
        } else {
          stack.push([item, depth + 1]);
        }
      }
    }
  }
  return null;
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
