import net from 'node:net';
import { PostgresConnection } from 'pg-gateway';
import { CatalogTimeout, Catalogs, CatalogsFull, type Catalog, type MetaCube } from './sql-api.catalog.js';
import { backend, readBind, readExecute, readMessage, readParse, readQuery, readTarget, type Bind, type Message, type Parse } from './sql-api.protocol.js';
import { SqlError, type SqlApiService, type SqlResult, type SqlSession } from './sql-api.service.js';
import { BindError, bindParameters, classify, parameterCount, splitStatements, type StatementKind } from './sql-api.sql.js';

/** The PostgreSQL version the catalog is (PGlite 0.6's), told to clients at start-up; a test checks they agree. */
export const SERVER_VERSION = '19.0';

export interface SqlApiListenerOptions {
  port: number;
  host: string;
  /** The server's certificate: SSL is offered when present (sslmode=require and stricter work). */
  tls: { key: Buffer; cert: Buffer } | null;
  /** Connections open at once, over every tenant (SQL_API_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** The longest statement text taken (bytes). */
  maxSqlBytes?: number;
  /** Catalogs kept in memory while no connection uses them (default 2), and open at most (default 8). */
  maxIdleCatalogs?: number;
  maxCatalogs?: number;
  /** How long a catalog statement may run before its thread is stopped (ms; default 10 s). */
  catalogTimeoutMs?: number;
  /** How long a connection may take to sign in before it is closed (ms; default 30 s), so idle sockets do not hold the cap. */
  signInTimeoutMs?: number;
  log: { warn(fields: object, message: string): void; debug(fields: object, message: string): void };
}

export interface SqlApiListener {
  listen(): Promise<void>;
  /** Where it listens, once listening. */
  address(): { host: string; port: number } | null;
  close(): Promise<void>;
}

const MAX_SQL_BYTES = 100 * 1024;

interface Statement {
  parse: Parse;
  kind: StatementKind;
}
interface PortalResult {
  describe: Buffer[];
  rows: Buffer[];
  tail: Buffer[];
  sent: number;
}
interface Portal {
  statement: Statement;
  bind: Bind;
  /** Run once, on Describe or Execute: what Describe sends, the rows Execute sends (`sent` so far), and what ends them. */
  result?: PortalResult;
}

const READ_ONLY = (what: string) =>
  new SqlError('25006', `The SQL API runs read-only statements (SELECT over cubes and views, catalog reads, SHOW, SET); ${what} is not run.`);

/**
 * The SQL API's listener: the PostgreSQL protocol on its own port (pg-gateway reads start-up, SSL
 * and the cleartext password); each connection is one environment's, its queries answered by the
 * runtime (cubes and views) or by the model's catalog (pg_catalog, information_schema, SHOW).
 */
export function sqlApiListener(service: SqlApiService, options: SqlApiListenerOptions): SqlApiListener {
  const maxSql = options.maxSqlBytes ?? MAX_SQL_BYTES;
  const catalogs = new Catalogs(options.maxIdleCatalogs ?? 2, options.maxCatalogs ?? 8, options.catalogTimeoutMs ?? 10_000);
  /** The connections counted against the cap, and every socket (refused ones too), closed with the listener. */
  const sockets = new Set<net.Socket>();
  const everyone = new Set<net.Socket>();
  const maxConnections = options.maxConnections ?? 100;
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    everyone.add(socket);
    socket.on('close', () => everyone.delete(socket));
    // Refused as PostgreSQL refuses it, so the client says why; closed whether or not it hangs up.
    if (sockets.size >= maxConnections) {
      socket.end(backend.error('53300', 'sorry, too many clients already', 'FATAL'));
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const signIn = setTimeout(() => socket.destroy(), options.signInTimeoutMs ?? 30_000);
    signIn.unref();
    socket.on('close', () => clearTimeout(signIn));
    connection(socket, () => clearTimeout(signIn));
  });

  function connection(socket: net.Socket, signedIn: () => void): void {
    let session: SqlSession | null = null;
    let model: Promise<{ catalog: Catalog; meta: MetaCube[] | null; tables: Set<string> | null }> | null = null;
    const statements = new Map<string, Statement>();
    const portals = new Map<string, Portal>();
    let failed = false;

    const conn = new PostgresConnection(socket, {
      serverVersion: SERVER_VERSION,
      authMode: 'cleartextPassword',
      ...(options.tls ? { tls: options.tls } : {}),
      async validateCredentials(credentials, state) {
        if (credentials.authMode !== 'cleartextPassword') return false;
        const params = state.clientInfo?.parameters;
        try {
          session = await service.login(credentials.user, params?.database ?? credentials.user, credentials.password);
        } catch (error) {
          options.log.warn({ err: error }, 'SQL API sign-in failed');
          session = null;
        }
        return session !== null;
      },
      onAuthenticated(state) {
        signedIn();
        const user = state.clientInfo?.parameters.user ?? '';
        for (const [name, value] of [
          ['server_encoding', 'UTF8'],
          ['client_encoding', 'UTF8'],
          ['DateStyle', 'ISO, MDY'],
          ['IntervalStyle', 'postgres'],
          ['TimeZone', 'UTC'],
          ['integer_datetimes', 'on'],
          ['standard_conforming_strings', 'on'],
          ['is_superuser', 'off'],
          ['session_authorization', user],
          ['application_name', state.clientInfo?.parameters.application_name ?? ''],
        ] as const) {
          send(backend.parameterStatus(name, value));
        }
        // From here on the connection reads its own messages, one at a time and in order: the
        // library's reader may re-enter while an answer is awaited.
        let pending: Buffer = Buffer.alloc(0);
        conn.detach().on('data', (chunk: Buffer) => {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          while (pending.length >= 5) {
            const length = pending.readInt32BE(1);
            if (length < 4 || length > maxSql + 65_536) {
              send(backend.error('08P01', 'invalid message length', 'FATAL'));
              conn.socket.destroy();
              return;
            }
            if (pending.length < 1 + length) break;
            enqueue(Buffer.from(pending.subarray(0, 1 + length)));
            pending = pending.subarray(1 + length);
          }
        });
      },
      onMessage(data, state) {
        // Messages pipelined behind the password, read before the socket was taken over below.
        if (!state.isAuthenticated || session === null) return false;
        enqueue(Buffer.from(data));
        return true;
      },
    });

    socket.on('close', () => {
      if (model)
        void model.then(
          ({ catalog }) => catalogs.release(catalog),
          () => undefined,
        );
    });

    let queue: Promise<void> = Promise.resolve();
    let queued = 0;
    function enqueue(data: Buffer): void {
      // A client that sends faster than it is answered is read no further until the queue drains.
      queued += 1;
      if (queued > 256) conn.socket.pause();
      queue = queue.then(async () => {
        try {
          if (session === null || conn.socket.destroyed) return;
          await handle(readMessage(data), session);
        } catch (error) {
          options.log.warn({ err: error }, 'SQL API message failed');
          send(backend.error('XX000', 'The SQL API could not handle the message.'));
          send(backend.ready());
        } finally {
          queued -= 1;
          if (queued <= 16 && conn.socket.isPaused()) conn.socket.resume();
        }
      });
    }

    function send(data: Buffer): void {
      if (!conn.socket.destroyed) conn.socket.write(data);
    }

    /** The connection's model and catalog; a catalog stopped since (a statement past its time) is replaced. */
    async function modelOf(s: SqlSession) {
      const current = await loadModel(s);
      if (!current.catalog.broken) return current;
      catalogs.release(current.catalog);
      if (model !== null && (await model.catch(() => null)) === current) model = null;
      return loadModel(s);
    }

    function loadModel(s: SqlSession) {
      model ??= (async () => {
        const meta = await service.meta(s);
        const catalog = await catalogs.acquire(`${s.tenant.id}:${s.env.row.id}:${s.env.environmentId}`, meta ?? []);
        const tables = meta === null ? null : new Set(meta.map((c) => c.name.toLowerCase()));
        return { catalog, meta, tables };
      })();
      const pending = model;
      pending.catch(() => {
        if (model === pending) model = null;
      });
      return pending;
    }

    const refusal = (error: unknown): Buffer => {
      if (error instanceof SqlError) return backend.error(error.sqlState, error.message);
      // Parameters that do not bind are the client's to fix; anything else is not told.
      if (error instanceof CatalogsFull) return backend.error('53000', error.message);
      if (error instanceof CatalogTimeout) return backend.error('57014', error.message);
      if (error instanceof BindError) return backend.error(error.message.startsWith('there is no') ? '08P01' : '22021', error.message);
      options.log.warn({ err: error }, 'SQL API statement failed');
      return backend.error('XX000', 'The SQL API could not run the statement; the server log says why.');
    };

    const tooLong = (sql: string) => Buffer.byteLength(sql, 'utf8') > maxSql;

    async function dataResult(s: SqlSession, sql: string): Promise<SqlResult> {
      const { meta } = await modelOf(s);
      return service.query(s, sql, meta);
    }

    async function handle(m: Message, s: SqlSession): Promise<void> {
      if (m.type === 'X') {
        conn.socket.end();
        return;
      }
      if (m.type === 'S') {
        failed = false;
        send(backend.ready());
        return;
      }
      if (m.type === 'Q') {
        await simpleQuery(readQuery(m), s);
        send(backend.ready());
        return;
      }
      if (m.type === 'H') return;
      if (failed) return;
      try {
        await extended(m, s);
      } catch (error) {
        failed = true;
        send(refusal(error));
      }
    }

    async function simpleQuery(sql: string, s: SqlSession): Promise<void> {
      if (tooLong(sql)) {
        send(backend.error('54000', `The statement is longer than ${maxSql} bytes.`));
        return;
      }
      const list = splitStatements(sql);
      if (list.length === 0) {
        send(backend.emptyQuery());
        return;
      }
      for (const statement of list) {
        try {
          // Session commands and refusals need no model (nor a runtime that is up).
          const first = classify(statement, null);
          const kind = first.kind === 'data' || first.kind === 'catalog' ? classify(statement, (await modelOf(s)).tables) : first;
          if (kind.kind === 'session') send(backend.commandComplete(kind.tag));
          else if (kind.kind === 'refused') throw READ_ONLY(kind.reason);
          else if (kind.kind === 'catalog') {
            const answer = await (await modelOf(s)).catalog.query(statement);
            for (const msg of answer) send(backend.raw(msg));
            if (answer.some((msg) => msg.type === 'E')) return;
          } else if (kind.kind === 'data') {
            const result = await dataResult(s, statement);
            send(backend.rowDescription(result.fields));
            for (const row of result.rows) send(backend.dataRow(row));
            send(backend.commandComplete(result.tag));
          }
        } catch (error) {
          send(refusal(error));
          return;
        }
      }
    }

    function textParams(bind: Bind): Array<string | null> {
      return bind.params.map((p, i) => {
        if (p === null) return null;
        const format = bind.paramFormats.length === 1 ? bind.paramFormats[0] : (bind.paramFormats[i] ?? 0);
        if (format !== 0) throw new SqlError('0A000', 'Binary parameters are not supported on queries over cubes and views: send them in text format.');
        return p.toString('utf8');
      });
    }

    async function run(portal: Portal, s: SqlSession): Promise<PortalResult> {
      if (portal.result) return portal.result;
      const { statement, bind } = portal;
      const kind = statement.kind;
      let result: PortalResult;
      if (kind.kind === 'empty') result = { describe: [backend.noData()], rows: [], tail: [backend.emptyQuery()], sent: 0 };
      else if (kind.kind === 'session') result = { describe: [backend.noData()], rows: [], tail: [backend.commandComplete(kind.tag)], sent: 0 };
      else if (kind.kind === 'refused') throw READ_ONLY(kind.reason);
      else if (kind.kind === 'catalog') {
        const answer = await (await modelOf(s)).catalog.execute(statement.parse, bind);
        const error = answer.find((msg) => msg.type === 'E');
        if (error) throw Object.assign(new Error('catalog'), { raw: error });
        result = {
          describe: answer.filter((msg) => msg.type === 'T' || msg.type === 'n').map(backend.raw),
          rows: answer.filter((msg) => msg.type === 'D').map(backend.raw),
          tail: answer.filter((msg) => msg.type === 'C' || msg.type === 'I').map(backend.raw),
          sent: 0,
        };
      } else {
        const sql = bindParameters(statement.parse.sql, textParams(bind), statement.parse.paramTypes);
        const data = await dataResult(s, sql);
        result = { describe: [backend.rowDescription(data.fields)], rows: data.rows.map(backend.dataRow), tail: [backend.commandComplete(data.tag)], sent: 0 };
      }
      portal.result = result;
      return result;
    }

    async function extended(m: Message, s: SqlSession): Promise<void> {
      switch (m.type) {
        case 'P': {
          const parse = readParse(m);
          if (tooLong(parse.sql)) throw new SqlError('54000', `The statement is longer than ${maxSql} bytes.`);
          const list = splitStatements(parse.sql);
          if (list.length > 1) throw new SqlError('42601', 'cannot insert multiple commands into a prepared statement');
          const first = classify(parse.sql, null);
          statements.set(parse.name, {
            parse,
            kind: first.kind === 'data' || first.kind === 'catalog' ? classify(parse.sql, (await modelOf(s)).tables) : first,
          });
          send(backend.parseComplete());
          return;
        }
        case 'B': {
          const bind = readBind(m);
          const statement = statements.get(bind.statement);
          if (!statement) throw new SqlError('26000', `prepared statement "${bind.statement}" does not exist`);
          portals.set(bind.portal, { statement, bind });
          send(backend.bindComplete());
          return;
        }
        case 'D': {
          const { kind, name } = readTarget(m);
          if (kind === 'P') {
            const portal = portals.get(name);
            if (!portal) throw new SqlError('34000', `portal "${name}" does not exist`);
            for (const msg of (await runOrRaw(portal, s))?.describe ?? []) send(msg);
            return;
          }
          const statement = statements.get(name);
          if (!statement) throw new SqlError('26000', `prepared statement "${name}" does not exist`);
          await describeStatement(statement, s);
          return;
        }
        case 'E': {
          const { portal: name, maxRows } = readExecute(m);
          const portal = portals.get(name);
          if (!portal) throw new SqlError('34000', `portal "${name}" does not exist`);
          const result = await runOrRaw(portal, s);
          if (result === null) return;
          // With a row limit (a driver's fetch size), the rows come in parts: PortalSuspended until the last.
          const end = maxRows > 0 ? Math.min(result.rows.length, result.sent + maxRows) : result.rows.length;
          for (const row of result.rows.slice(result.sent, end)) send(row);
          const more = end < result.rows.length;
          result.sent = end;
          if (more) send(backend.portalSuspended());
          else for (const msg of result.tail) send(msg);
          return;
        }
        case 'C': {
          const { kind, name } = readTarget(m);
          if (kind === 'S') statements.delete(name);
          else portals.delete(name);
          send(backend.closeComplete());
          return;
        }
        default:
          throw new SqlError('0A000', `The SQL API does not take protocol message "${m.type}".`);
      }
    }

    /** The portal's result; null when the catalog refused it (its ErrorResponse sent as it is). */
    async function runOrRaw(portal: Portal, s: SqlSession): Promise<PortalResult | null> {
      try {
        return await run(portal, s);
      } catch (error) {
        const raw = (error as { raw?: Message }).raw;
        if (raw) {
          failed = true;
          send(backend.raw(raw));
          return null;
        }
        throw error;
      }
    }

    async function describeStatement(statement: Statement, s: SqlSession): Promise<void> {
      const { kind, parse } = statement;
      if (kind.kind === 'catalog') {
        const answer = await (await modelOf(s)).catalog.describe(parse);
        const error = answer.find((msg) => msg.type === 'E');
        if (error) {
          failed = true;
          send(backend.raw(error));
          return;
        }
        for (const msg of answer) if (msg.type === 't' || msg.type === 'T' || msg.type === 'n') send(backend.raw(msg));
        return;
      }
      if (kind.kind !== 'data') {
        if (kind.kind === 'refused') throw READ_ONLY(kind.reason);
        send(backend.parameterDescription([]));
        send(backend.noData());
        return;
      }
      const count = parameterCount(parse.sql);
      const types = Array.from({ length: count }, (_, i) => parse.paramTypes[i] || 25);
      send(backend.parameterDescription(types));
      // The columns of the query run with every parameter NULL: known only from the runtime's answer.
      try {
        const data = await dataResult(
          s,
          bindParameters(
            parse.sql,
            types.map(() => null),
            parse.paramTypes,
          ),
        );
        send(backend.rowDescription(data.fields));
      } catch {
        send(backend.noData());
      }
    }
  }

  return {
    listen: () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
    address() {
      const a = server.address();
      return a !== null && typeof a === 'object' ? { host: a.address, port: a.port } : null;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of everyone) socket.destroy();
      });
      await catalogs.close();
    },
  };
}
