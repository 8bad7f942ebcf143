/**
 * True when a write failed on a unique index, in either dialect. Services check for a conflict
 * before writing, but two concurrent requests can both pass that check; the index then decides,
 * and this lets the loser get the same 409 instead of a 500.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // better-sqlite3 names the extended result code; pg reports the SQLSTATE.
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
