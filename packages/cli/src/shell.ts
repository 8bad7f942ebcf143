/**
 * Commands in hints are meant to be pasted into a POSIX shell: a path or name with a space, a quote
 * or a `$` in it must arrive as one argument, unchanged.
 */
export function shellArg(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
