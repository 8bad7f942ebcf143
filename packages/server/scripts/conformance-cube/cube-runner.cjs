/* eslint-disable */
/**
 * Cube Core in a process of its own, for `npm run conformance:cube`: the REST API of
 * @cubejs-backend/server-core (installed by the script in CUBE_CORE_DIR) over the model in
 * CUBE_SCHEMA_PATH on the local PostgreSQL, on 127.0.0.1:CUBE_PORT. Tokens are HS256 JWTs signed
 * with CUBE_API_SECRET; their payload is the security context.
 *
 * Without the native module (its download is skipped on install), three of its entry points are
 * replaced here, in the required modules, before Cube is loaded: the logger setup (a no-op), the
 * Jinja engine factory (a stub: the corpus has no Jinja), and the result wrappers' getFinalResult
 * (the rows keyed by member and the answer as JSON, in JavaScript, following the rules of Cube's
 * native transform, rust/cubeorchestrator/src/query_result_transform.rs: requested members must be
 * in the annotation, times as UTC wall time to the millisecond, the bare name of a time dimension
 * unless the dimension itself is among the query's dimensions). CUBEJS_TESSERACT_SQL_PLANNER=false selects the JavaScript SQL planner.
 */
const path = require('node:path');
const dir = process.env.CUBE_CORE_DIR;
const req = (name) => require(require.resolve(name, { paths: [dir] }));

const native = req('@cubejs-backend/native');
native.setupLogger = () => undefined;
native.resetLogger = () => undefined;
native.isFallbackBuild = () => false;
native.NativeInstance.prototype.newJinjaEngine = function newJinjaEngine() {
  return {
    loadTemplate() {},
    renderTemplate() { throw new Error('Jinja is not available without the native module'); },
  };
};
const moment = req('moment-timezone');

function transformValue(value, type) {
  if (value !== null && value !== undefined && (type === 'time' || value instanceof Date)) {
    return (value instanceof Date ? moment(value) : moment.utc(value)).format('YYYY-MM-DDTHH:mm:ss.SSS');
  }
  return value;
}

function transformRows(td, rows) {
  const { aliasToMemberNameMap: aliases, annotation, query, queryType } = td;
  // As the native transform does: a member missing from the annotation is hidden. With rows, the
  // members of the result's columns are checked; without, the query's members and time dimensions.
  const list = rows || [];
  const requested = list.length > 0
    ? Object.keys(list[0]).map((alias) => aliases[alias] || alias)
    : [...(query.measures || []), ...(query.dimensions || []), ...(query.timeDimensions || []).map((t) => t.dimension)];
  for (const m of requested) {
    const name = typeof m === 'string' ? m : m && m.name;
    if (name && !annotation[name]) {
      throw new Error(`You requested hidden member: '${name}'. Please make it visible using \`public: true\`. Please note primaryKey fields are \`public: false\` by default: https://cube.dev/docs/schema/reference/joins#setting-a-primary-key.`);
    }
  }
  const plain = new Set([...(query.dimensions || [])]);
  return (rows || []).map((row) => {
    const out = {};
    for (const [alias, value] of Object.entries(row)) {
      const member = aliases[alias];
      if (!member) continue;
      const v = transformValue(value, annotation[member] && annotation[member].type);
      out[member] = v;
      const parts = member.split('.');
      if (parts.length === 3 && !plain.has(`${parts[0]}.${parts[1]}`)) out[`${parts[0]}.${parts[1]}`] = v;
    }
    if (queryType === 'compareDateRangeQuery') {
      const td0 = (query.timeDimensions || []).find((t) => t.dateRange);
      if (td0) out.compareDateRange = [].concat(td0.dateRange).join(' - ');
    }
    return out;
  });
}

function finalOf(wrapper) {
  const td = wrapper.getTransformData()[0];
  const root = wrapper.getRootResultObject()[0];
  const rows = wrapper.getArray ? wrapper.getArray() : wrapper.jsResult;
  return { ...root, data: transformRows(td, rows) };
}
native.ResultWrapper.prototype.getFinalResult = async function getFinalResult() {
  return JSON.stringify(finalOf(this));
};
native.ResultMultiWrapper.prototype.getFinalResult = async function getFinalResult() {
  return JSON.stringify({ queryType: this.rootResultObject.queryType, results: this.results.map(finalOf), slowQuery: this.rootResultObject.slowQuery });
};

process.env.CUBEJS_TESSERACT_SQL_PLANNER = 'false';
process.env.CUBEJS_TELEMETRY = 'false';
process.env.CUBEJS_DB_TYPE = 'postgres';
// An API instance builds the pre-aggregations its queries match (as in development), into the
// source database (`external: false`), in a schema of its own.
process.env.CUBEJS_PRE_AGGREGATIONS_BUILDER = 'true';
process.env.CUBEJS_PRE_AGGREGATIONS_SCHEMA = 'cube_pre_aggregations';
const { CubejsServerCore } = req('@cubejs-backend/server-core');
const { PostgresDriver } = req('@cubejs-backend/postgres-driver');
const express = req('express');
const jwt = req('jsonwebtoken');

const secret = process.env.CUBE_API_SECRET;
const core = new CubejsServerCore({
  apiSecret: secret,
  schemaPath: process.env.CUBE_SCHEMA_PATH,
  driverFactory: () => new PostgresDriver({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', maxPoolSize: 4 }),
  checkAuth: (req, auth) => {
    const token = String(auth || '').replace(/^Bearer /, '');
    const payload = jwt.verify(token, secret);
    const { iat, exp, ...context } = payload;
    req.securityContext = context;
  },
  cacheAndQueueDriver: 'memory',
  devServer: false,
  telemetry: false,
  scheduledRefreshTimer: false,
  logger: (msg, params) => {
    if (process.env.CUBE_LOG && /Error/.test(msg)) process.stderr.write(`${msg} ${JSON.stringify(params).slice(0, 2000)}\n`);
  },
});
const app = express();
core.initApp(app).then(() => {
  const server = app.listen(Number(process.env.CUBE_PORT), '127.0.0.1', () => {
    process.stdout.write(`cube-runner listening ${server.address().port}\n`);
    if (process.send) process.send({ type: 'listening', port: server.address().port });
  });
}, (error) => {
  process.stderr.write(`cube-runner failed: ${error.stack}\n`);
  process.exit(1);
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
