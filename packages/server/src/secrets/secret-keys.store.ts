import { sql, type Kysely } from 'kysely';

/*
 * The queries of stored.ts: the service's own table `secret_keys`, and the sealed columns the
 * areas declare (a table, its integer id and the text column), read and written by name.
 */

// The service's table is not among the areas' types: it is reached through an untyped handle.
export type AnyDb = Kysely<any>;

/** How many values of the column start with `prefix` (are sealed with the key it names). */
export async function countWithPrefix(db: AnyDb, table: string, column: string, prefix: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql`substr(${sql.ref(column)}, 1, ${prefix.length})`, '=', prefix)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function listSecretKeys(db: AnyDb): Promise<Array<{ id: string; check_value: string }>> {
  return (await db.selectFrom('secret_keys').select(['id', 'check_value']).execute()) as Array<{ id: string; check_value: string }>;
}

export async function listSecretKeyIds(db: AnyDb): Promise<Array<{ id: string }>> {
  return (await db.selectFrom('secret_keys').select('id').execute()) as Array<{ id: string }>;
}

export async function deleteSecretKey(db: AnyDb, id: string): Promise<void> {
  await db.deleteFrom('secret_keys').where('id', '=', id).execute();
}

/** Records a key with its check value, unless another process recorded it first. */
export async function insertSecretKeyUnlessPresent(db: AnyDb, id: string, checkValue: string, at: string): Promise<void> {
  await db
    .insertInto('secret_keys')
    .values({ id, check_value: checkValue, created_at: at })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** A batch of a sealed column's rows after id `after`, in id order: the id, the value and `contextColumns`. */
export async function sealedRowsAfter(
  db: AnyDb,
  table: string,
  id: string,
  value: string,
  contextColumns: string[],
  after: number,
  limit: number,
): Promise<Array<Record<string, unknown>>> {
  return (
    (await db
      .selectFrom(table)
      .select([id, value, ...contextColumns])
      .where(id, '>', after)
      // A nullable column (a pod's secret while it runs) holds nothing to re-encrypt when null.
      .where(value, 'is not', null)
      .orderBy(id)
      .limit(limit)
      .execute()) as Array<Record<string, unknown>>
  );
}

/** Replaces a sealed value only if the row still holds `expected`; false when it changed meanwhile. */
export async function replaceSealedValue(
  db: AnyDb,
  table: string,
  id: string,
  value: string,
  rowId: unknown,
  expected: string,
  sealed: string,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ [value]: sealed })
    .where(id, '=', rowId)
    .where(value, '=', expected)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
