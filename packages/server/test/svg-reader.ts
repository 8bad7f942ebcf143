import { expect } from 'vitest';

/**
 * A small reader of the SVG Vega writes (a chart's, or a rendered page holding charts): elements,
 * their attributes and their text, and the parts of a chart a reader looks at: an axis' labels
 * and ticks, a line's segments.
 */

export interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Node[];
  text: string;
}

export function parseSvg(svg: string): Node {
  const root: Node = { name: '#root', attrs: {}, children: [], text: '' };
  const stack = [root];
  const token = /<!--[\s\S]*?-->|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/g;
  for (const m of svg.matchAll(token)) {
    const [, closing, name, attrText, selfClosing, text] = m;
    const top = stack[stack.length - 1]!;
    if (text !== undefined) top.text += text;
    else if (name === undefined) continue;
    else if (closing) {
      expect(top.name, `</${name}> closes <${top.name}>`).toBe(name);
      stack.pop();
    } else {
      const attrs = Object.fromEntries([...(attrText ?? '').matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
      const node: Node = { name, attrs, children: [], text: '' };
      top.children.push(node);
      if (!selfClosing) stack.push(node);
    }
  }
  expect(stack, 'every element is closed').toHaveLength(1);
  return root;
}

export function* descendants(node: Node): Generator<Node> {
  for (const child of node.children) {
    yield child;
    yield* descendants(child);
  }
}

const hasClass = (node: Node, name: string) => (node.attrs.class ?? '').split(/\s+/).includes(name);
const unescapeXml = (text: string) =>
  text.replace(/&(lt|gt|amp|quot|apos|#\d+);/g, (_, e: string) =>
    e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" } as Record<string, string>)[e]!,
  );

export interface AxisLabel {
  text: string;
  transform: string;
}

/** The x or y axis of a chart (the one Vega labels for readers): its labels, with their transforms, and its ticks' positions. */
export function axis(svg: Node, which: 'X' | 'Y'): { labels: AxisLabel[]; ticks: Array<{ x: number; y: number }> } {
  const group = [...descendants(svg)].find((n) => hasClass(n, 'role-axis') && (n.attrs['aria-label'] ?? '').startsWith(`${which}-axis`));
  expect(group, `the ${which} axis`).toBeDefined();
  const inner = [...descendants(group!)];
  const labels = inner
    .filter((n) => hasClass(n, 'role-axis-label'))
    .flatMap((g) => g.children.filter((c) => c.name === 'text'))
    .map((t) => ({ text: unescapeXml(t.text), transform: t.attrs.transform ?? '' }));
  const ticks = inner
    .filter((n) => hasClass(n, 'role-axis-tick'))
    .flatMap((g) => g.children.filter((c) => c.name === 'line'))
    .map((l) => {
      const [, x, y] = /translate\(([-\d.]+),([-\d.]+)\)/.exec(l.attrs.transform ?? '') ?? [];
      return { x: Number(x), y: Number(y) };
    });
  return { labels, ticks };
}

/** The line marks' paths, each as its segments (one per `M` command), each segment its points. */
export function lineSegments(svg: Node): Array<Array<Array<{ x: number; y: number }>>> {
  return [...descendants(svg)]
    .filter((n) => hasClass(n, 'mark-line'))
    .flatMap((g) => g.children.filter((c) => c.name === 'path'))
    .map((p) =>
      (p.attrs.d ?? '')
        .split('M')
        .filter((s) => s.trim() !== '')
        .map((segment) => [...segment.replace(/Z/g, '').matchAll(/([-\d.e]+),([-\d.e]+)/g)].map((point) => ({ x: Number(point[1]), y: Number(point[2]) }))),
    );
}

/** The part of a rendered page that is one widget (`<g data-widget="…">`). */
export function widgetNode(page: Node, id: string): Node {
  const found = [...descendants(page)].find((n) => n.name === 'g' && n.attrs['data-widget'] === id);
  expect(found, `widget ${id} on the page`).toBeDefined();
  return found!;
}
