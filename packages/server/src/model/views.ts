import type { RawIncludedMember, RawView, RawViewCube } from './model-schema.js';
import type { Path } from './parse.js';
import type { Report } from './report.js';
import { didYouMean } from './suggest.js';
import { intact, type EntitySymbol, type Exposed, type MemberSymbol, type Model } from './symbols.js';

/**
 * What each view exposes: for every `cubes` entry, the cube at the end of its join path (each
 * hop a join declared on the cube before it), and the members its `includes` take from that
 * cube less its `excludes`, under their alias and the entry's prefix. Two members exposed under
 * one name would make the view's queries ambiguous, so that is an error.
 */

interface EntryContext {
  model: Model;
  view: EntitySymbol;
  report: Report;
  subject: string;
  path: Path;
  /** This view's own entries so far: where a clash is an error (inherited ones are replaced). */
  own: Map<string, Exposed>;
}

/** The cube at the end of the join path, or null when the path is broken (reported) or leads where nothing can be checked. */
function walkJoinPath(context: EntryContext, joinPath: string): EntitySymbol | null {
  const { model, report, view, subject } = context;
  const at = [...context.path, 'join_path'];
  const hops = joinPath.split('.');
  let cube = model.byName.get(hops[0]!);
  if (!cube) {
    if (!model.openWorld) report.at(view.file, at, `${subject} refers to unknown cube "${hops[0]}"${didYouMean(hops[0]!, model.byName.keys())}`);
    return null;
  }
  if (cube.kind === 'view') {
    report.at(view.file, at, `${subject} starts at "${cube.name}", which is a view; a join path starts at a cube`);
    return null;
  }
  for (const hop of hops.slice(1)) {
    if (cube.opaque || cube.incomplete) return null;
    if (!cube.joins.has(hop)) {
      report.at(view.file, at, `${subject}: cube "${cube.name}" has no join to "${hop}"${didYouMean(hop, cube.joins.keys())}`, { text: hop });
      return null;
    }
    const next: EntitySymbol | undefined = model.byName.get(hop);
    if (!next || next.kind !== 'cube') return null;
    cube = next;
  }
  return cube.opaque ? null : cube;
}

function expose(context: EntryContext, exposed: Exposed): void {
  const clash = context.own.get(exposed.name);
  if (clash) {
    const from = (e: Exposed) => `${e.entity.name}.${e.member.name}`;
    context.report.at(
      context.view.file,
      exposed.path,
      `View "${context.view.name}": member "${exposed.name}" is exposed twice, as ${from(clash)} and as ${from(exposed)}; give one an alias or set prefix: true`,
    );
    return;
  }
  context.own.set(exposed.name, exposed);
}

function unknownIn(context: EntryContext, cube: EntitySymbol, name: string, verb: string, path: Path): void {
  if (cube.incomplete) return;
  context.report.at(
    context.view.file,
    path,
    `${context.subject} ${verb} unknown member "${name}" of cube "${cube.name}"${didYouMean(name, cube.members.keys())}`,
  );
}

function exposeEntry(context: EntryContext, entry: RawViewCube): void {
  const cube = walkJoinPath(context, entry.join_path);
  if (!cube) return;
  const excluded = new Set(entry.excludes ?? []);
  entry.excludes?.forEach((name, i) => {
    if (!cube.members.has(name)) unknownIn(context, cube, name, 'excludes', [...context.path, 'excludes', i]);
  });
  const prefix = entry.prefix ? `${entry.alias ?? cube.name}_` : '';
  const make = (member: MemberSymbol, path: Path, include?: RawIncludedMember): Exposed => ({
    name: `${prefix}${include?.alias ?? member.name}`,
    entity: cube,
    member,
    joinPath: entry.join_path,
    path,
    title: include?.title,
    description: include?.description,
    format: include?.format,
    meta: include?.meta,
  });
  if (entry.includes === '*') {
    for (const member of cube.members.values()) if (!excluded.has(member.name)) expose(context, make(member, [...context.path, 'includes']));
    return;
  }
  entry.includes.forEach((item, i) => {
    const include = typeof item === 'string' ? undefined : item;
    const name = include?.name ?? (item as string);
    const member = cube.members.get(name);
    const path = [...context.path, 'includes', i];
    if (!member) unknownIn(context, cube, name, 'includes', path);
    else if (!excluded.has(name)) expose(context, make(member, path, include));
  });
}

/** Views extending views take their parent's members first; their own replace those of the same name. */
export function exposeViews(model: Model, report: Report): void {
  const done = new Set<EntitySymbol>();
  const build = (view: EntitySymbol): void => {
    if (done.has(view)) return;
    done.add(view);
    if (view.parent) {
      build(view.parent);
      for (const [name, exposed] of view.parent.exposed) view.exposed.set(name, exposed);
    }
    const own = new Map<string, Exposed>();
    for (const [entry, i] of intact(view, 'cubes', (view.raw as RawView).cubes)) {
      const path = [...view.path, 'cubes', i];
      exposeEntry({ model, view, report, subject: `View "${view.name}": cubes entry "${entry.join_path}"`, path, own }, entry);
    }
    for (const [name, exposed] of own) {
      const defined = view.members.get(name);
      if (defined?.owner === view) {
        report.at(
          view.file,
          [...defined.path, 'name'],
          `View "${view.name}": member "${name}" is defined on the view and also exposed as ${exposed.entity.name}.${exposed.member.name}`,
        );
      }
      view.exposed.set(name, exposed);
    }
  };
  for (const entity of model.entities) if (entity.kind === 'view') build(entity);
}
