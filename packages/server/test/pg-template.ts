import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { migrate, openStore } from '../src/db/database.js';

/**
 * PostgreSQL test schemas cloned from one migrated once per run. Running the 30-odd migrations
 * took 0.5 s per schema on an idle machine and up to 2.4 s in a full run (about 150 schemas a
 * run); replaying the template's dump is one round trip of plain DDL. The template is made by
 * `migrate` itself and dumped with `pg_dump`, so a clone holds exactly what the migrations make,
 * their bookkeeping rows included (a store's own `migrate` then finds nothing to do).
 * migrate-shared-database.test.ts still migrates empty schemas from zero.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The template's dump, from the global setup to the workers; null when there is none. */
    pgTemplateFile: string | null;
  }
}

/** The template schema's name in the dump, replaced by each clone's. */
const PLACEHOLDER = 'mapi_test_template_schema';

/** Makes the template (global setup) and returns the file of its dump, or null without `pg_dump` (tests then migrate each schema). */
export async function prepareTemplate(url: string, dir: string): Promise<string | null> {
  const schema = `${PLACEHOLDER}_${randomBytes(4).toString('hex')}`;
  await sqlOn(url, `create schema ${schema}`);
  try {
    const store = openStore({ dialect: 'postgres', url, schema, poolSize: 1 });
    try {
      await migrate(store);
    } finally {
      await store.close();
    }
    let dump: string;
    try {
      dump = execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--inserts', '--schema', schema, url], { encoding: 'utf8', maxBuffer: 64 << 20 });
    } catch {
      return null;
    }
    // psql's meta-commands (\restrict) are not SQL; every name the dump qualifies carries the schema.
    const text = dump
      .split('\n')
      .filter((line) => !line.startsWith('\\'))
      .join('\n')
      .replaceAll(schema, PLACEHOLDER);
    const file = path.join(dir, 'template.sql');
    fs.writeFileSync(file, text);
    return file;
  } finally {
    await sqlOn(url, `drop schema ${schema} cascade`);
  }
}

let cached: string | null | undefined;

/** The statements that create `schema` as a migrated clone, or plain `create schema` without a template. */
export function createSchemaSql(schema: string): string {
  if (cached === undefined) {
    const file = providedFile();
    cached = file !== null && fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  }
  return cached === null ? `create schema ${schema}` : cached.replaceAll(PLACEHOLDER, schema);
}

/** The global setup's dump; null outside a Vitest run (the fuzz scripts use the harness too). */
function providedFile(): string | null {
  try {
    return inject('pgTemplateFile') ?? null;
  } catch {
    return null;
  }
}

export async function sqlOn(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
