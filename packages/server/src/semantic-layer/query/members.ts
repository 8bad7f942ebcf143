import type { CompiledCube, CompiledDimension, CompiledMeasure, CompiledSegment, ModelArtifact } from '../../model/artifact.js';
import { QueryError } from './errors.js';

export type MemberKind = 'measure' | 'dimension' | 'segment';

/** A member as a query names it, resolved to the cube member that computes it. */
export interface ResolvedMember {
  /** The name the query used: `cube.member` or `view.member`. */
  name: string;
  kind: MemberKind;
  cube: string;
  member: CompiledMeasure | CompiledDimension | CompiledSegment;
  /** For a view's member: the cubes from the view's root to `cube`, which the query joins along. */
  joinPath: string[] | null;
  title: string;
  shortTitle: string;
  type: string | null;
}

/** Words a title leaves in lower case (inflection's `non_titlecased_words`); the first word of a title is capitalised all the same. */
const SMALL_WORDS = new Set([
  'and',
  'or',
  'nor',
  'a',
  'an',
  'the',
  'so',
  'but',
  'to',
  'of',
  'at',
  'by',
  'from',
  'into',
  'on',
  'onto',
  'off',
  'out',
  'in',
  'over',
  'with',
  'for',
]);

/**
 * A name in PascalCase as the `camelcase` package (6.x, `pascalCase: true`) writes it, which Cube's
 * titles start from: words split at `_`, `.`, `-` and spaces and at case changes, each capitalised,
 * and a letter after digits upper-cased (`count_7d` → `Count7D`).
 */
function pascalCase(input: string): string {
  let text = input.trim();
  if (text.length === 0) return '';
  if (text.length === 1) return text.toUpperCase();
  if (text !== text.toLowerCase()) {
    // A boundary before an upper-case letter after a lower-case one, and before the last of a run of capitals followed by a lower-case letter.
    let lastLower = false;
    let lastUpper = false;
    let lastLastUpper = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (lastLower && /\p{Lu}/u.test(c)) {
        text = `${text.slice(0, i)}-${text.slice(i)}`;
        lastLower = false;
        lastLastUpper = lastUpper;
        lastUpper = true;
        i++;
      } else if (lastUpper && lastLastUpper && /\p{Ll}/u.test(c)) {
        text = `${text.slice(0, i - 1)}-${text.slice(i - 1)}`;
        lastLastUpper = lastUpper;
        lastUpper = false;
        lastLower = true;
      } else {
        lastLower = c.toLowerCase() === c && c.toUpperCase() !== c;
        lastLastUpper = lastUpper;
        lastUpper = c.toUpperCase() === c && c.toLowerCase() !== c;
      }
    }
  }
  text = text.replace(/^[_.\- ]+/, '').toLowerCase();
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return text.replace(/[_.\- ]+([\p{Alpha}\p{N}_]|$)/gu, (_, next: string) => next.toUpperCase()).replace(/\d+([\p{Alpha}\p{N}_]|$)/gu, (m) => m.toUpperCase());
}

/**
 * A title from a name exactly as Cube makes one (its schema compiler's `titleize`: the name in
 * PascalCase, then `inflection.underscore` and `inflection.titleize`, then `Id` as `ID`):
 * `created_at` → `Created at`, `customer_id` → `Customer ID`, `rolling_count_7d` → `Rolling Count7 D`.
 */
export const titled = (name: string): string => {
  const underscored = pascalCase(name)
    .split('::')
    .map((part) => part.replace(/([A-Z])/g, '_$1').replace(/^_/, ''))
    .join('/')
    .toLowerCase();
  const words = underscored
    .replace(/_/g, ' ')
    .split(' ')
    .map((word) =>
      word
        .split('-')
        .map((w) => (SMALL_WORDS.has(w) ? w : w.charAt(0).toUpperCase() + w.slice(1)))
        .join('-'),
    )
    .join(' ');
  return (words.charAt(0).toUpperCase() + words.slice(1)).replace(/\bId(s?)\b/g, (_, plural: string) => `ID${plural}`);
};

/** The build's cubes and views, indexed for the compiler. */
export class ModelIndex {
  readonly cubes = new Map<string, CompiledCube>();
  readonly #views = new Map<string, ModelArtifact['views'][number]>();

  constructor(readonly artifact: ModelArtifact) {
    for (const cube of artifact.cubes) this.cubes.set(cube.name, cube);
    for (const view of artifact.views) this.#views.set(view.name, view);
  }

  view(name: string): ModelArtifact['views'][number] | undefined {
    return this.#views.get(name);
  }

  cube(name: string): CompiledCube {
    const cube = this.cubes.get(name);
    if (!cube) throw new QueryError(`Cube ${JSON.stringify(name)} does not exist in this build.`);
    return cube;
  }

  /** A cube's own member of `kind`, or undefined. */
  own(cube: CompiledCube, name: string): { kind: MemberKind; member: CompiledMeasure | CompiledDimension | CompiledSegment } | undefined {
    const measure = cube.measures.find((m) => m.name === name);
    if (measure) return { kind: 'measure', member: measure };
    const dimension = cube.dimensions.find((d) => d.name === name);
    if (dimension) return { kind: 'dimension', member: dimension };
    const segment = cube.segments.find((s) => s.name === name);
    return segment && { kind: 'segment', member: segment };
  }

  /** `cube.member` or `view.member`, checked against the kind the query uses it as. */
  resolve(name: string, expected: MemberKind | 'measure-or-dimension', where: string): ResolvedMember {
    const dot = name.indexOf('.');
    if (dot <= 0 || dot === name.length - 1) throw new QueryError(`${where}: ${JSON.stringify(name)} is not a member name of the form cube.member.`);
    const owner = name.slice(0, dot);
    const local = name.slice(dot + 1);
    const view = this.#views.get(owner);
    let resolved: ResolvedMember;
    if (view) {
      const exposed = view.members.find((m) => m.name === local);
      if (!exposed) throw new QueryError(`${where}: view ${owner} has no member ${JSON.stringify(local)}.`);
      if (exposed.member === null) throw new QueryError(`${where}: ${name} is defined by the view's own SQL, which queries cannot use yet.`);
      const [cubeName, memberName] = [exposed.member.slice(0, exposed.member.indexOf('.')), exposed.member.slice(exposed.member.indexOf('.') + 1)];
      const found = this.own(this.cube(cubeName), memberName);
      if (!found) throw new QueryError(`${where}: ${name} stands for ${exposed.member}, which does not exist.`);
      const shortTitle = exposed.title ?? found.member.title ?? titled(local);
      resolved = {
        name,
        kind: found.kind,
        cube: cubeName,
        member: found.member,
        joinPath: exposed.join_path ? exposed.join_path.split('.') : [cubeName],
        title: `${view.title ?? titled(owner)} ${shortTitle}`,
        shortTitle,
        type: exposed.type,
      };
    } else {
      const cube = this.cubes.get(owner);
      if (!cube) throw new QueryError(`${where}: ${JSON.stringify(owner)} is neither a cube nor a view of this build.`);
      const found = this.own(cube, local);
      if (!found) throw new QueryError(`${where}: cube ${owner} has no member ${JSON.stringify(local)}.`);
      const shortTitle = found.member.title ?? titled(local);
      resolved = {
        name,
        kind: found.kind,
        cube: owner,
        member: found.member,
        joinPath: null,
        title: `${cube.title ?? titled(owner)} ${shortTitle}`,
        shortTitle,
        type: 'type' in found.member ? found.member.type : null,
      };
    }
    const ok = expected === 'measure-or-dimension' ? resolved.kind !== 'segment' : resolved.kind === expected;
    if (!ok) throw new QueryError(`${where}: ${name} is a ${resolved.kind}, not a ${expected === 'measure-or-dimension' ? 'measure or dimension' : expected}.`);
    return resolved;
  }
}
