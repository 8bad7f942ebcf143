/**
 * `npm run cycles`: the import graph's rules, over one run of dependency-cruiser (its JSON on
 * stdin): the rules of .dependency-cruiser.cjs (no circular imports; shared code imports no area;
 * an area uses another only through its index.ts), and no loop between folders: the server's
 * folders (each area, and each folder of shared code) must import one another in one direction,
 * so that each can be read, tested and changed knowing only what it imports. Prints every
 * violation and every loop with the imports that make it; exits 1 on any.
 */
import { readFileSync } from 'node:fs';

interface Cruised {
  modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>;
  summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
}

const SRC = 'packages/server/src/';
const result = JSON.parse(readFileSync(0, 'utf8')) as Cruised;

/** The folder a module belongs to: `areas/<name>`, a folder of shared code, or null for the top-level files (the composition root and its helpers). */
function folderOf(path: string): string | null {
  if (!path.startsWith(SRC)) return null;
  const parts = path.slice(SRC.length).split('/');
  if (parts.length === 1) return null;
  return parts[0] === 'areas' ? `areas/${parts[1]}` : parts[0]!;
}

const edges = new Map<string, Map<string, string>>();
for (const module of result.modules) {
  const from = folderOf(module.source);
  if (from === null) continue;
  for (const { resolved } of module.dependencies) {
    const to = folderOf(resolved);
    if (to === null || to === from) continue;
    const out = edges.get(from) ?? new Map<string, string>();
    if (!out.has(to)) out.set(to, `${module.source.slice(SRC.length)} → ${resolved.slice(SRC.length)}`);
    edges.set(from, out);
  }
}

// Tarjan's strongly connected components: a component of more than one folder is a loop.
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const loops: string[][] = [];
let counter = 0;
function visit(v: string): void {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) loops.push(component.sort());
  }
}
for (const v of edges.keys()) if (!index.has(v)) visit(v);

const violations = result.summary.violations;
for (const v of violations) console.log(`${v.rule.name}: ${v.from} → ${v.to}`);
for (const loop of loops) {
  console.log(`folder loop: ${loop.join(', ')}`);
  const members = new Set(loop);
  for (const from of loop) for (const [to, why] of edges.get(from) ?? []) if (members.has(to)) console.log(`  ${from} → ${to}: ${why}`);
}
const modules = result.modules.filter((m) => m.source.startsWith('packages/')).length;
if (violations.length > 0 || loops.length > 0) {
  console.log(`\n${violations.length} rule violations and ${loops.length} folder loops in ${modules} modules.`);
  process.exit(1);
}
console.log(
  `No circular imports, no shared code importing an area, no area reaching into another, no folder loops (${modules} modules, ${edges.size} folders).`,
);
