/** `primaryKey` -> `primary_key`: the JavaScript spelling of a YAML key. */
export function snakeCase(word: string): string {
  return word.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Edit distance counting a swap of neighbours as one edit (`nmae` is one typo from `name`); past `limit` is just "too far". */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * "; did you mean "x"?" when one candidate is the snake_case spelling of `word` or is within a
 * typo or two of it; empty otherwise. Only ever computed for an error.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const list = [...candidates];
  const snake = snakeCase(word);
  if (snake !== word && list.includes(snake)) return `; did you mean "${snake}"?`;
  const limit = word.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const candidate of list) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase(), limit);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best === null ? '' : `; did you mean "${best}"?`;
}
