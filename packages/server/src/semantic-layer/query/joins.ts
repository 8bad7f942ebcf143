import type { Relationship } from '../../model/artifact.js';
import { QueryError } from './errors.js';
import type { ModelIndex } from './members.js';

/** A join as the model defines it: on `from` (the cube whose `joins` lists it), to `to`. */
export interface JoinEdge {
  from: string;
  to: string;
  relationship: Relationship;
  sql: string;
}

/** The cubes a query reads, joined from `root` along `edges` (each edge's far end joined after its near end). */
export interface JoinPlan {
  root: string;
  /** In join order; `near` is the cube already joined when the edge is added. */
  steps: Array<{ edge: JoinEdge; near: string; far: string }>;
}

function edge(index: ModelIndex, from: string, to: string): JoinEdge | undefined {
  const join = index.cube(from).joins.find((j) => j.name === to);
  return join && { from, to, relationship: join.relationship, sql: join.sql };
}

/**
 * Joins for `cubes` (in the order the query names them). A view's members bring their join path
 * (`paths`), which is followed as written. Other cubes are reached from the root along the
 * model's joins, in the direction they are defined: the shortest path, which must be the only one
 * of its length; an ambiguous or missing path is a 400 naming the cubes.
 */
export function planJoins(index: ModelIndex, cubes: string[], paths: string[][]): JoinPlan {
  const wanted = [...new Set(cubes)];
  if (paths.length > 0) return fromPaths(index, wanted, paths);
  let ambiguity: string | null = null;
  let missing: string | null = null;
  for (const root of wanted) {
    const result = shortestFrom(
      index,
      root,
      wanted.filter((c) => c !== root),
    );
    if ('plan' in result) return result.plan;
    if (result.ambiguous) ambiguity ??= result.ambiguous;
    else missing ??= result.missing;
  }
  throw new QueryError(ambiguity ?? missing ?? 'No join path joins the cubes of this query.');
}

function shortestFrom(index: ModelIndex, root: string, targets: string[]): { plan: JoinPlan } | { ambiguous?: string; missing: string } {
  // Breadth first over the defined joins, counting the shortest paths to each cube.
  const depth = new Map<string, number>([[root, 0]]);
  const count = new Map<string, number>([[root, 1]]);
  const via = new Map<string, JoinEdge>();
  let frontier = [root];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const at of frontier) {
      for (const join of index.cube(at).joins) {
        if (!index.cubes.has(join.name)) continue;
        const d = depth.get(at)! + 1;
        const known = depth.get(join.name);
        if (known === undefined) {
          depth.set(join.name, d);
          count.set(join.name, count.get(at)!);
          via.set(join.name, { from: at, to: join.name, relationship: join.relationship, sql: join.sql });
          next.push(join.name);
        } else if (known === d) {
          count.set(join.name, count.get(join.name)! + count.get(at)!);
        }
      }
    }
    frontier = next;
  }
  for (const target of targets) {
    if (!depth.has(target)) return { missing: `No join path from cube ${root} to cube ${target}: add a join between them to the model, or query them apart.` };
    if (count.get(target)! > 1)
      return {
        ambiguous: `The join path from cube ${root} to cube ${target} is ambiguous: ${count.get(target)} paths of ${depth.get(target)} joins; query through a view that names its join path.`,
        missing: '',
      };
  }
  const steps: JoinPlan['steps'] = [];
  const joined = new Set([root]);
  const add = (cube: string) => {
    if (joined.has(cube)) return;
    const e = via.get(cube)!;
    add(e.from);
    steps.push({ edge: e, near: e.from, far: cube });
    joined.add(cube);
  };
  for (const target of targets) add(target);
  return { plan: { root, steps } };
}

function fromPaths(index: ModelIndex, cubes: string[], paths: string[][]): JoinPlan {
  const root = paths[0]![0]!;
  const steps: JoinPlan['steps'] = [];
  const joined = new Set([root]);
  for (const path of paths) {
    if (path[0] !== root) throw new QueryError(`Members of views rooted at ${root} and at ${path[0]} cannot be queried together.`);
    for (let i = 1; i < path.length; i++) {
      const [near, far] = [path[i - 1]!, path[i]!];
      if (joined.has(far)) continue;
      const e = edge(index, near, far) ?? edge(index, far, near);
      if (!e) throw new QueryError(`The view's join path ${path.join('.')} has no join between ${near} and ${far}.`);
      steps.push({ edge: e, near, far });
      joined.add(far);
    }
  }
  // Cubes named directly beside the view's members: the shortest path from the root.
  const rest = cubes.filter((c) => !joined.has(c));
  if (rest.length > 0) {
    const result = shortestFrom(index, root, rest);
    if (!('plan' in result)) throw new QueryError(result.ambiguous || result.missing);
    for (const step of result.plan.steps) {
      if (joined.has(step.far)) continue;
      steps.push(step);
      joined.add(step.far);
    }
  }
  return { root, steps };
}

/** Whether `cube`'s rows are repeated by the plan's joins (a one-to-many join crossed from its side). */
export function multiplies(plan: JoinPlan, cube: string): boolean {
  const adjacent = new Map<string, Array<{ other: string; fans: boolean }>>();
  const link = (a: string, b: string, fans: boolean) => adjacent.set(a, [...(adjacent.get(a) ?? []), { other: b, fans }]);
  for (const { edge: e } of plan.steps) {
    link(e.from, e.to, e.relationship === 'one_to_many');
    link(e.to, e.from, e.relationship === 'many_to_one');
  }
  const seen = new Set([cube]);
  const stack = [cube];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for (const { other, fans } of adjacent.get(at) ?? []) {
      if (seen.has(other)) continue;
      if (fans) return true;
      seen.add(other);
      stack.push(other);
    }
  }
  return false;
}
