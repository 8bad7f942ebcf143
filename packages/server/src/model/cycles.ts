import type { MemberGraph } from './references.js';
import type { Report } from './report.js';

/**
 * Strongly connected components of the member graph (Tarjan's algorithm, with an explicit stack
 * so a long chain of members cannot overflow the call stack). Every component of more than one
 * member, or a member reading itself, is a cycle the runtime could never expand.
 */
function components(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string, work: Array<{ node: string; next: number }>) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    work.push({ node, next: 0 });
  };
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [];
    visit(root, work);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node)!;
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!edges.has(target)) continue;
        if (!index.has(target)) visit(target, work);
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      found.push(component);
    }
  }
  return found;
}

/** The shortest way from `start` back to itself inside one component, for the message. */
function shortestCycle(edges: Map<string, string[]>, start: string, within: Set<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const target of edges.get(node)!) {
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start];
      }
      if (within.has(target) && !previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

export function checkCycles(graph: MemberGraph, report: Report): void {
  for (const component of components(graph.edges)) {
    if (component.length === 1 && !graph.edges.get(component[0]!)!.includes(component[0]!)) continue;
    // A cycle made only of members a cube inherits unchanged is its parent's cycle, reported there.
    const own = component.filter((key) => {
      const { entity, member } = graph.members.get(key)!;
      return member.owner === entity;
    });
    if (own.length === 0) continue;
    const start = own.sort()[0]!;
    const path = shortestCycle(graph.edges, start, new Set(component));
    const { member } = graph.members.get(start)!;
    report.at(member.owner.file, [...member.path, 'sql'], `Circular reference: ${path.join(' -> ')}`);
  }
}
