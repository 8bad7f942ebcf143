/** The two stores: embedded SQLite by default, PostgreSQL when several processes share one database. */
export type Dialect = 'sqlite' | 'postgres';
