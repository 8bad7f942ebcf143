/**
 * The one bound on how deep client JSON may nest. Free-form values (deployment settings, workbook
 * meta, report specs, dashboard configs, any part of a body typed as open JSON) nest at most
 * MAX_JSON_DEPTH levels, counting the value itself; a whole body at most MAX_BODY_DEPTH, which
 * leaves room for the declared structure around a free-form value. Past these, merging, filtering
 * and serializing the value could exhaust the stack.
 */
export const MAX_JSON_DEPTH = 32;
export const MAX_BODY_DEPTH = 2 * MAX_JSON_DEPTH;

/**
 * True when `value` nests objects or arrays more than `limit` levels deep (`{}` is one level).
 * Iterative, so no input can overflow the stack, and it stops at the first branch past the limit.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    for (const inner of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof inner === 'object' && inner !== null) stack.push([inner, depth + 1]);
    }
  }
  return false;
}
