import { SecretKeyError } from './keys.js';
import { Secrets, SecretsError } from './secrets.js';
import {
  countWithPrefix,
  deleteSecretKey,
  insertSecretKeyUnlessPresent,
  listSecretKeyIds,
  listSecretKeys,
  replaceSealedValue,
  sealedRowsAfter,
  type AnyDb,
} from './secret-keys.store.js';

/**
 * What the service knows of the database: its own table `secret_keys` (one row per key that may
 * have sealed values, with a check value sealed under it), and the columns its users declare.
 * It knows no area: each area that stores sealed values declares its column once, and the
 * start-up check and re-encryption walk every declared column.
 */
export interface SecretColumn {
  /** The table and its integer primary key, and the text column holding sealed values. */
  table: string;
  id: string;
  value: string;
  /** The other columns `context` reads. */
  contextColumns: string[];
  /** The context the values were sealed with, from their row. */
  context(row: Record<string, unknown>): string;
}

const CHECK_TEXT = 'mapi secret key check';
const CHECK_CONTEXT = 'secret-key-check';

/** How many values of `columns` are sealed with `keyId`. */
async function countUnder(db: AnyDb, columns: readonly SecretColumn[], keyId: string): Promise<number> {
  const prefix = Secrets.prefixOf(keyId);
  let total = 0;
  for (const c of columns) {
    total += await countWithPrefix(db, c.table, c.value, prefix);
  }
  return total;
}

/**
 * The start-up check, before anything is served. Every key the database knows must be
 * configured and open its check value, unless no value is sealed with it any more (then it is
 * forgotten); the current key is recorded. Throws SecretKeyError saying what to fix.
 */
export async function checkSecretKeys(db: AnyDb, secrets: Secrets, columns: readonly SecretColumn[]): Promise<void> {
  const rows = await listSecretKeys(db);
  for (const row of rows) {
    if (secrets.hasKey(row.id)) {
      let opened: string | null = null;
      try {
        opened = secrets.open(row.check_value, CHECK_CONTEXT);
      } catch {
        // reported below
      }
      if (opened !== CHECK_TEXT) {
        throw new SecretKeyError(
          `Secret key "${row.id}" (${secrets.origin}) is not the key this database's values were encrypted with under that id: its check value does not decrypt. ` +
            `Configure the key that was in use under "${row.id}" (restore it from where you keep it), or give a new key another id.`,
        );
      }
      continue;
    }
    const count = await countUnder(db, columns, row.id);
    if (count === 0) {
      await deleteSecretKey(db, row.id);
      continue;
    }
    throw new SecretKeyError(
      `The database holds ${count} value(s) encrypted with secret key "${row.id}", which is not configured (${secrets.origin} has ${secrets.keyIds.map((id) => `"${id}"`).join(', ')}). ` +
        `Add that key after the current one (MAPI_SECRET_KEY or MAPI_SECRET_KEY_FILE, as "${row.id}:<key>"); "npm run admin -- secrets re-encrypt" then moves its values to the current key.`,
    );
  }
  if (!rows.some((r) => r.id === secrets.currentKeyId)) {
    await insertSecretKeyUnlessPresent(db, secrets.currentKeyId, secrets.seal(CHECK_TEXT, CHECK_CONTEXT), new Date().toISOString());
  }
}

export interface ReencryptReport {
  currentKeyId: string;
  columns: Array<{ column: string; total: number; reencrypted: number; alreadyCurrent: number; changedMeanwhile: number }>;
  /** Keys no value is sealed with any more, forgotten by the database: they may leave the configuration. */
  retired: string[];
  /** Keys that still seal values (written meanwhile by a process on an older configuration). */
  remaining: Array<{ keyId: string; count: number }>;
}

/**
 * Seals every stored value again under the current key, a batch of rows at a time. A value
 * already under it is left alone, so running it twice changes nothing. Each write applies only
 * if the row still holds the value read, so a value written meanwhile is never overwritten.
 */
export async function reencryptAll(db: AnyDb, secrets: Secrets, columns: readonly SecretColumn[], batch = 500): Promise<ReencryptReport> {
  await checkSecretKeys(db, secrets, columns);
  const report: ReencryptReport = { currentKeyId: secrets.currentKeyId, columns: [], retired: [], remaining: [] };
  for (const c of columns) {
    const line = { column: `${c.table}.${c.value}`, total: 0, reencrypted: 0, alreadyCurrent: 0, changedMeanwhile: 0 };
    let after = 0;
    for (;;) {
      const rows = await sealedRowsAfter(db, c.table, c.id, c.value, c.contextColumns, after, batch);
      for (const row of rows) {
        line.total++;
        const stored = String(row[c.value]);
        if (secrets.keyIdOf(stored) === secrets.currentKeyId) {
          line.alreadyCurrent++;
          continue;
        }
        const context = c.context(row);
        let plaintext: string;
        try {
          plaintext = secrets.open(stored, context);
        } catch (error) {
          throw new SecretsError((error as SecretsError).reason ?? 'undecryptable', `${line.column} row ${String(row[c.id])}: ${(error as Error).message}`);
        }
        if (await replaceSealedValue(db, c.table, c.id, c.value, row[c.id], stored, secrets.seal(plaintext, context))) line.reencrypted++;
        else line.changedMeanwhile++;
      }
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < batch) break;
      after = Number(last[c.id]);
    }
    report.columns.push(line);
  }
  const known = await listSecretKeyIds(db);
  for (const { id } of known) {
    if (id === secrets.currentKeyId) continue;
    const count = await countUnder(db, columns, id);
    if (count > 0) report.remaining.push({ keyId: id, count });
    else {
      await deleteSecretKey(db, id);
      report.retired.push(id);
    }
  }
  return report;
}
