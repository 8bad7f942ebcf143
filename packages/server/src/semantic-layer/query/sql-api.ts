/**
 * `/v1/sql`: one SELECT written over a cube or a view as if it were a table, translated into the
 * semantic query `/v1/load` takes. The SQL never reaches a data source: only the query it
 * translates to is compiled (compile.ts), every value bound. What lies outside the subset below
 * is a 400 naming the clause.
 *
 *   SELECT <member | MEASURE(measure) | COUNT(*) | SUM(sum measure) ... | DATE_TRUNC('month', time dimension)> [AS name], ...
 *   FROM <cube or view> [[AS] alias]
 *   [WHERE <conditions on dimensions>]  [GROUP BY <every selected non-measure, by name or position>]
 *   [HAVING <conditions on measures>]   [ORDER BY <selected column, by name, alias or position> [ASC | DESC]]
 *   [LIMIT n] [OFFSET n]
 *
 * Conditions compare a member with literals (=, <>, <, <=, >, >=, IN, BETWEEN, IS [NOT] NULL,
 * IS [NOT] TRUE/FALSE, [I]LIKE '%text%', 'text%' or '%text'), joined by AND, OR and NOT. They keep
 * SQL's meaning: `region <> 'EU'` and `NOT region LIKE 'E%'` leave out rows where region is NULL,
 * and a date compared with a time means its midnight (UTC: SQL cannot set the query's time zone).
 */
import parser from 'node-sql-parser/build/postgresql.js';
import { GRANULARITIES, type Granularity } from './dialect.js';
import { QueryError } from './errors.js';
import type { ModelIndex, ResolvedMember } from './members.js';
import type { Filter, MemberFilter, Operator } from './query.js';

/** One column of the answer. */
export interface SqlColumn {
  /** Its name: the alias, else the member's name in the cube or view (`status`), or `<dimension>_<granularity>` for DATE_TRUNC. */
  name: string;
  /** The key of the engine's rows that fills it: `orders.status`, `orders.created_at.month`. */
  key: string;
  kind: 'measure' | 'dimension' | 'timeDimension';
}

export interface SqlTranslation {
  /** The semantic query, as `/v1/load` takes it. */
  query: Record<string, unknown>;
  columns: SqlColumn[];
}

type Node = Record<string, any>;
interface Term {
  member: ResolvedMember;
  granularity?: Granularity;
}

const MAX_SQL = 32_768;
/** Conditions nest (AND within OR within AND ...) at most this deep; the engine takes 10 levels of filter groups. */
const MAX_DEPTH = 16;
const sqlParser = new parser.Parser();
const OPTIONS = { database: 'postgresql' };
const COMPARISONS: Record<string, Operator> = {
  '=': 'equals',
  '<': 'less_than',
  '<=': 'less_than_or_equal',
  '>': 'greater_than',
  '>=': 'greater_than_or_equal',
};
const NEGATED: Record<string, string> = { '=': '<>', '<>': '=', '<': '>=', '<=': '>', '>': '<=', '>=': '<' };
const FLIPPED: Record<string, string> = { '=': '=', '<>': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
const AGGREGATES: Record<string, string[]> = { SUM: ['sum'], AVG: ['avg'], MIN: ['min'], MAX: ['max'], COUNT: ['count'] };
const SELECT_KEYS = new Set([
  'type',
  'with',
  'options',
  'distinct',
  'columns',
  'into',
  'from',
  'where',
  'groupby',
  'having',
  'orderby',
  'limit',
  'window',
  '_next',
  'set_op',
  'collate',
  'loc',
]);

/** The SQL of an expression, for messages. */
function text(node: Node): string {
  if (node.ast) return 'a subquery';
  try {
    const sql = String(sqlParser.exprToSQL(node, OPTIONS));
    return sql.length > 80 ? `${sql.slice(0, 77)}...` : sql;
  } catch {
    return `an expression (${String(node.type)})`;
  }
}

const present = (value: unknown) =>
  value !== null &&
  value !== undefined &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === 'object' && Object.keys(value as object).length === 0);
const identifier = (node: unknown): string | null =>
  typeof node === 'string' ? node : node && typeof node === 'object' && 'value' in node ? String((node as Node).value) : null;
const functionName = (node: Node): string =>
  (node.type === 'aggr_func' ? String(node.name) : (node.name?.name ?? []).map((p: Node) => p.value).join('.')).toUpperCase();

/** A literal's value, or undefined when the node is not one. */
function literal(node: Node): { value: unknown } | undefined {
  switch (node.type) {
    case 'single_quote_string':
      return { value: String(node.value).replace(/''/g, "'") };
    case 'number':
    case 'bigint': {
      const n = Number(node.value);
      return Number.isFinite(n) ? { value: n } : undefined;
    }
    case 'bool':
      return { value: node.value === true };
    case 'null':
      return { value: null };
    case 'date':
    case 'timestamp':
    case 'time':
      return { value: String(node.value) };
    case 'cast':
      return node.expr ? literal(node.expr) : undefined;
    default:
      return undefined;
  }
}

/** A LIKE pattern as an operator and its text: `%x%`, `x%` or `%x`, with `\` escaping `%`, `_` and itself. */
function likePattern(pattern: string): { kind: 'contains' | 'starts_with' | 'ends_with'; value: string } {
  const refuse = () =>
    new QueryError(`LIKE ${JSON.stringify(pattern)}: patterns are '%text%' (contains), 'text%' (starts with) or '%text' (ends with), with no other % or _.`);
  const start = pattern.startsWith('%');
  let body = start ? pattern.slice(1) : pattern;
  const end = /(^|[^\\])(\\\\)*%$/.test(body);
  if (end) body = body.slice(0, -1);
  if (!start && !end) throw refuse();
  let value = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) value += body[++i];
    else if (c === '%' || c === '_' || c === '\\') throw refuse();
    else value += c;
  }
  if (value === '') throw refuse();
  return { kind: start && end ? 'contains' : start ? 'ends_with' : 'starts_with', value };
}

/** One SELECT statement over a cube or a view → the semantic query and the columns of its answer. */
export function translateSql(sql: string, index: ModelIndex): SqlTranslation {
  try {
    return translate(sql, index);
  } catch (error) {
    if (error instanceof RangeError) throw new QueryError('The SQL nests too deeply.');
    throw error;
  }
}

/** The operands of a chain of one operator (`a AND b AND c`), without recursion: long chains are common. */
function chain(node: Node, operator: string): Node[] {
  const out: Node[] = [];
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'binary_expr' && String(n.operator).toUpperCase() === operator) stack.push(n.right, n.left);
    else out.push(n);
  }
  return out;
}

function translate(sql: string, index: ModelIndex): SqlTranslation {
  if (sql.length > MAX_SQL) throw new QueryError(`The SQL is longer than ${MAX_SQL} characters.`);
  let ast: Node | Node[];
  try {
    ast = sqlParser.astify(sql, OPTIONS) as Node | Node[];
  } catch (error) {
    if (error instanceof RangeError) throw new QueryError('The SQL nests too deeply.');
    const at = (error as { location?: { start?: { line: number; column: number } } }).location?.start;
    // The parser lists every token it expected; a long list is cut short, keeping what it found.
    const message = (error as Error).message.replace(/^(Expected (?:[^,]*, ){8})[^]*( but [^]*)$/, '$1...$2');
    throw new QueryError(`The SQL does not parse${at ? ` (line ${at.line}, column ${at.column})` : ''}: ${message}`);
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  if (statements.length !== 1)
    throw new QueryError(
      statements.length === 0 ? 'The SQL holds no statement.' : `The SQL holds ${statements.length} statements; /v1/sql runs exactly one SELECT.`,
    );
  const stmt = statements[0]!;
  if (stmt.type !== 'select') throw new QueryError(`${String(stmt.type).toUpperCase()} is not supported: /v1/sql runs one SELECT over a cube or a view.`);
  if (present(stmt.with)) throw new QueryError('WITH (a common table expression) is not supported: select from a cube or a view.');
  if (stmt._next || stmt.set_op) throw new QueryError(`${String(stmt.set_op ?? 'union').toUpperCase()} is not supported: /v1/sql runs one SELECT.`);
  if (present(stmt.distinct?.type)) throw new QueryError('DISTINCT is not supported: GROUP BY the selected dimensions instead.');
  if (present(stmt.into?.position) || present(stmt.into?.expr)) throw new QueryError('SELECT INTO is not supported.');
  if (present(stmt.window)) throw new QueryError('WINDOW is not supported: window functions are not part of /v1/sql.');
  if (present(stmt.options)) throw new QueryError('SELECT options are not supported.');
  if (present(stmt.collate)) throw new QueryError('COLLATE is not supported.');
  for (const key of Object.keys(stmt)) if (!SELECT_KEYS.has(key) && present(stmt[key])) throw new QueryError(`The SELECT's ${key} clause is not supported.`);

  // FROM: one cube or view.
  const from = (stmt.from ?? []) as Node[];
  if (from.length === 0) throw new QueryError('FROM is required: name one cube or view.');
  if (from.length > 1)
    throw new QueryError(
      from.some((f) => f.join)
        ? 'JOIN is not supported: query a view that joins the cubes.'
        : 'FROM names several tables: name one cube or view (a view joins cubes).',
    );
  const table = from[0]!;
  if (table.expr)
    throw new QueryError(
      table.expr.ast ? 'A subquery in FROM is not supported: name a cube or a view.' : `FROM ${text(table.expr)} is not supported: name a cube or a view.`,
    );
  if (present(table.tablesample)) throw new QueryError('TABLESAMPLE is not supported.');
  if (present(table.db) || present(table.schema))
    throw new QueryError(`FROM ${String(table.db ?? table.schema)}.${String(table.table)}: name the cube or view without a schema.`);
  const tableName = String(table.table);
  const exists = (name: string) => index.cubes.has(name) || index.artifact.views.some((v) => v.name === name);
  const source = [tableName, tableName.toLowerCase()].find(exists);
  if (source === undefined) throw new QueryError(`FROM ${tableName}: no cube or view of this build is called ${JSON.stringify(tableName)}.`);
  const alias = typeof table.as === 'string' ? table.as : null;

  // Members: `name`, `source.name` or `alias.name`, matched as written, else in lower case (PostgreSQL folds unquoted names).
  const resolve = (name: string, clause: string): ResolvedMember => {
    let first: unknown;
    for (const candidate of new Set([name, name.toLowerCase()])) {
      try {
        return index.resolve(`${source}.${candidate}`, 'measure-or-dimension', clause);
      } catch (error) {
        first ??= error;
      }
    }
    if (segmentOf(name)) throw new QueryError(`${clause}: ${name} is a segment, a condition of its own: WHERE ${name} [AND ...].`);
    throw first;
  };
  /** The segment called `name`, if there is one. */
  const segmentOf = (name: string): string | undefined =>
    [...new Set([name, name.toLowerCase()])]
      .map((n) => `${source}.${n}`)
      .find((n) => {
        try {
          return index.resolve(n, 'segment', 'WHERE') !== undefined;
        } catch {
          return false;
        }
      });
  const columnName = (node: Node, clause: string): string => {
    if (node.column === '*' || node.column?.expr?.type === 'star')
      throw new QueryError(`${clause}: * is not supported: name the columns (the cube's or view's members).`);
    if (present(node.db) || present(node.schema)) throw new QueryError(`${clause}: ${text(node)}: name members without a schema.`);
    const qualifier = identifier(node.table);
    const name = identifier(node.column?.expr) ?? String(node.column);
    if (qualifier !== null && ![source, alias, tableName].includes(qualifier)) {
      throw new QueryError(`${clause}: ${qualifier}.${name} names ${qualifier}, which is not the FROM clause's ${source}${alias ? ` (or ${alias})` : ''}.`);
    }
    return name;
  };
  const localName = (m: ResolvedMember) => m.name.slice(source.length + 1);

  /** A member expression: a column, MEASURE(m), an aggregate matching a measure's type, or DATE_TRUNC(g, time dimension). */
  const termOf = (node: Node, clause: string): Term => {
    if (node.ast) throw new QueryError(`${clause}: subqueries are not supported.`);
    if (present(node.over)) throw new QueryError(`${clause}: window functions (${text(node)}) are not supported.`);
    if (node.type === 'column_ref') return { member: resolve(columnName(node, clause), clause) };
    if (node.type === 'function' || node.type === 'aggr_func') {
      const name = functionName(node);
      const args = (node.type === 'aggr_func' ? [node.args?.expr].filter(Boolean) : (node.args?.value ?? [])) as Node[];
      const measureArg = () => {
        if (args.length !== 1 || args[0]!.type !== 'column_ref') throw new QueryError(`${clause}: ${text(node)}: ${name}() takes one measure.`);
        const member = resolve(columnName(args[0]!, clause), clause);
        if (member.kind !== 'measure')
          throw new QueryError(`${clause}: ${text(node)}: ${localName(member)} is a dimension; ${name}() takes a measure (group by dimensions instead).`);
        return member;
      };
      if (name === 'MEASURE') return { member: measureArg() };
      if (name === 'DATE_TRUNC') {
        const granularity = args[0] && literal(args[0])?.value;
        if (args.length !== 2 || typeof granularity !== 'string' || !GRANULARITIES.includes(granularity.toLowerCase() as Granularity)) {
          throw new QueryError(`${clause}: ${text(node)}: DATE_TRUNC takes a granularity (${GRANULARITIES.join(', ')}) and a time dimension.`);
        }
        if (args[1]!.type !== 'column_ref') throw new QueryError(`${clause}: ${text(node)}: DATE_TRUNC takes a time dimension.`);
        const member = resolve(columnName(args[1]!, clause), clause);
        if (member.kind !== 'dimension' || member.type !== 'time')
          throw new QueryError(`${clause}: ${text(node)}: ${localName(member)} is not a time dimension.`);
        return { member, granularity: granularity.toLowerCase() as Granularity };
      }
      if (node.type === 'aggr_func' && AGGREGATES[name]) {
        const distinct = present(node.args?.distinct);
        if (name === 'COUNT' && args[0]?.type === 'star' && !distinct) return { member: countMeasure(clause) };
        const member = measureArg();
        const type = (member.member as { type: string }).type;
        const types = distinct ? (name === 'COUNT' ? ['count_distinct', 'count_distinct_approx'] : []) : AGGREGATES[name]!;
        if (!types.includes(type))
          throw new QueryError(
            `${clause}: ${text(node)}: ${localName(member)} is a ${type} measure; an aggregate takes a measure of its own kind (SUM a sum, COUNT(DISTINCT ...) a count_distinct), and MEASURE(${localName(member)}) takes any.`,
          );
        return { member };
      }
      throw new QueryError(
        `${clause}: the function ${name.toLowerCase()}() is not supported: /v1/sql takes members, MEASURE(measure), COUNT(*), aggregates over measures of their kind and DATE_TRUNC.`,
      );
    }
    throw new QueryError(`${clause}: ${text(node)} is not supported here: name a member of ${source}.`);
  };

  /** COUNT(*): the measure counting the rows of the cube or view: one named `count`, else its only unfiltered count. */
  const countMeasure = (clause: string): ResolvedMember => {
    const view = index.artifact.views.find((v) => v.name === source);
    const names = view
      ? view.members.filter((m) => m.kind === 'measure' && m.member !== null).map((m) => m.name)
      : index.cube(source).measures.map((m) => m.name);
    const counts = names
      .map((n) => resolve(n, clause))
      .filter((m) => {
        const measure = m.member as { type: string; filters?: string[] };
        return measure.type === 'count' && !measure.filters?.length;
      });
    const chosen = counts.find((m) => localName(m) === 'count') ?? (counts.length === 1 ? counts[0] : undefined);
    if (!chosen)
      throw new QueryError(
        `${clause}: COUNT(*): ${source} has ${counts.length === 0 ? 'no count measure' : `several count measures (${counts.map(localName).join(', ')})`}; name one with MEASURE(name).`,
      );
    return chosen;
  };
  const keyOf = (t: Term) => (t.granularity ? `${t.member.name}.${t.granularity}` : t.member.name);

  // SELECT: each item a member; names unique.
  const columns: Array<SqlColumn & { term: Term }> = [];
  for (const item of (stmt.columns ?? []) as Node[]) {
    const term = termOf(item.expr ?? item, 'SELECT');
    const name = typeof item.as === 'string' ? item.as : term.granularity ? `${localName(term.member)}_${term.granularity}` : localName(term.member);
    if (columns.some((c) => c.name === name)) throw new QueryError(`SELECT: two columns are called ${name}; give one an alias (AS other_name).`);
    const kind = term.member.kind === 'measure' ? 'measure' : term.granularity ? 'timeDimension' : 'dimension';
    columns.push({ name, key: keyOf(term), kind, term });
  }
  if (columns.length === 0) throw new QueryError('SELECT: name at least one column.');
  const truncated = new Set(columns.filter((c) => c.term.granularity).map((c) => c.term.member.name));
  const raw = columns.find((c) => c.kind === 'dimension' && truncated.has(c.key));
  if (raw) throw new QueryError(`SELECT: ${localName(raw.term.member)} is selected both as it is and with DATE_TRUNC; select one of them.`);

  /** A selected column that ORDER BY or GROUP BY names: by position, output name, or the member expression. */
  const selected = (node: Node, clause: string) => {
    if (node.type === 'number') {
      const column = columns[Number(node.value) - 1];
      if (!column || !Number.isInteger(Number(node.value)))
        throw new QueryError(`${clause} ${String(node.value)}: the SELECT has columns 1 to ${columns.length}.`);
      return column;
    }
    if (node.type === 'column_ref' && node.table === null) {
      const byName = columns.find((c) => c.name === columnName(node, clause));
      if (byName) return byName;
    }
    const key = keyOf(termOf(node, clause));
    const column = columns.find((c) => c.key === key);
    if (!column) throw new QueryError(`${clause} ${text(node)}: only selected columns can be named here; add it to the SELECT.`);
    return column;
  };

  // GROUP BY: exactly the selected dimensions.
  const groupby = (stmt.groupby?.columns ?? []) as Node[];
  for (const key of Object.keys(stmt.groupby ?? {}))
    if (key !== 'columns' && present(stmt.groupby[key])) throw new QueryError(`GROUP BY ${key} is not supported.`);
  const grouped = new Set<string>();
  for (const node of groupby) {
    const column = selected(node, 'GROUP BY');
    if (column.kind === 'measure') throw new QueryError(`GROUP BY ${text(node)}: ${column.name} is a measure; measures aggregate over the groups.`);
    grouped.add(column.key);
  }
  const ungrouped = columns.filter((c) => c.kind !== 'measure' && !grouped.has(c.key));
  if (ungrouped.length > 0)
    throw new QueryError(`GROUP BY must list ${ungrouped.map((c) => c.name).join(', ')}: every selected column that is not a measure is grouped by.`);

  // WHERE and HAVING: filters, dimensions in WHERE, measures in HAVING.
  const segments: string[] = [];
  const filterOf = (node: Node, clause: 'WHERE' | 'HAVING', negated: boolean, depth = 0): Filter => {
    if (depth > MAX_DEPTH) throw new QueryError(`${clause}: conditions nest more than ${MAX_DEPTH} levels deep.`);
    for (;;) {
      // NOT: negate what follows (NOT over AND and OR turns them over, down to each comparison).
      const not =
        (node.type === 'unary_expr' && String(node.operator).toUpperCase() === 'NOT') ||
        (node.type === 'function' && functionName(node) === 'NOT' && node.args?.value?.length === 1);
      if (!not) break;
      node = node.type === 'unary_expr' ? node.expr : node.args.value[0];
      negated = !negated;
    }
    if (node.ast) throw new QueryError(`${clause}: subqueries are not supported.`);
    const op = String(node.operator ?? '').toUpperCase();
    if (node.type === 'binary_expr' && (op === 'AND' || op === 'OR')) {
      const kind = (op === 'AND') !== negated ? 'and' : 'or';
      const list = chain(node, op).map((child) => filterOf(child, clause, negated, depth + 1));
      return { [kind]: list.flatMap((f) => (kind in f ? (f as Record<string, Filter[]>)[kind]! : [f])) } as Filter;
    }
    const member = (term: Term, about: Node): ResolvedMember => {
      if (term.granularity) throw new QueryError(`${clause} ${text(about)}: DATE_TRUNC is not supported in conditions; compare the time dimension itself.`);
      if (clause === 'WHERE' && term.member.kind === 'measure')
        throw new QueryError(`WHERE ${text(about)}: ${localName(term.member)} is a measure; conditions on measures go in HAVING.`);
      if (clause === 'HAVING' && term.member.kind !== 'measure')
        throw new QueryError(`HAVING ${text(about)}: ${localName(term.member)} is a dimension; conditions on dimensions go in WHERE.`);
      return term.member;
    };
    const leaf = (m: ResolvedMember, operator: Operator, value?: unknown, extra: Partial<MemberFilter> = {}): MemberFilter => ({
      member: m.name,
      operator,
      ...(value === undefined ? {} : { value }),
      ...extra,
    });
    // SQL's negative conditions are never true where the member is NULL; the engine's negative operators keep NULLs.
    const notNull = (m: ResolvedMember, f: MemberFilter): Filter => ({ and: [f, leaf(m, 'is_not_null')] });
    const values = (m: ResolvedMember, list: Node[], about: Node): unknown[] =>
      list.map((v) => {
        if (v.ast) throw new QueryError(`${clause}: subqueries are not supported.`);
        const lit = literal(v);
        if (!lit)
          throw new QueryError(
            `${clause} ${text(about)}: ${text(v)} is not a literal; conditions compare a member with values (a column with a column, arithmetic and functions are not supported).`,
          );
        if (lit.value === null) throw new QueryError(`${clause} ${text(about)}: compare with NULL using IS NULL or IS NOT NULL.`);
        // A date compared with a time means its midnight, as in SQL (the engine reads a bare date as its whole day).
        return m.type === 'time' && typeof lit.value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(lit.value.trim()) ? `${lit.value.trim()}T00:00:00` : lit.value;
      });

    if (node.type === 'column_ref') {
      const m = member(termOf(node, clause), node);
      if (m.type !== 'boolean') throw new QueryError(`${clause} ${text(node)}: ${localName(m)} is not a boolean; compare it with a value.`);
      return leaf(m, 'equals', !negated);
    }
    if (node.type !== 'binary_expr') throw new QueryError(`${clause}: ${text(node)} is not supported: conditions compare a member with values.`);
    if (op in FLIPPED || op === '!=') {
      let [left, right, cmp] = [node.left as Node, node.right as Node, op === '!=' ? '<>' : op];
      if (literal(left) && !literal(right)) [left, right, cmp] = [right, left, FLIPPED[cmp]!];
      if (literal(left)) throw new QueryError(`${clause} ${text(node)}: a condition names a member of ${source}.`);
      const m = member(termOf(left, clause), node);
      const [value] = values(m, [right], node);
      if (negated) cmp = NEGATED[cmp]!;
      return cmp === '<>' ? notNull(m, leaf(m, 'not_equals', value)) : leaf(m, COMPARISONS[cmp]!, value);
    }
    const m = member(termOf(node.left, clause), node);
    if (op === 'IS' || op === 'IS NOT') {
      const not = (op === 'IS NOT') !== negated;
      const right = literal(node.right);
      if (right?.value === null) return leaf(m, not ? 'is_not_null' : 'is_null');
      if (typeof right?.value === 'boolean') return leaf(m, not ? 'not_equals' : 'equals', right.value);
      throw new QueryError(`${clause} ${text(node)}: IS takes NULL, TRUE or FALSE.`);
    }
    if (op === 'IN' || op === 'NOT IN') {
      if (node.right?.type !== 'expr_list') throw new QueryError(`${clause} ${text(node)}: IN takes a list of values.`);
      const list = values(m, node.right.value as Node[], node);
      return (op === 'NOT IN') !== negated ? notNull(m, leaf(m, 'not_equals', list)) : leaf(m, 'equals', list);
    }
    if (op === 'BETWEEN' || op === 'NOT BETWEEN') {
      const [low, high] = values(m, (node.right?.value ?? []) as Node[], node);
      if ((op === 'NOT BETWEEN') !== negated) return { or: [leaf(m, 'less_than', low), leaf(m, 'greater_than', high)] };
      return leaf(m, 'between', [low, high]);
    }
    if (['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE'].includes(op)) {
      const pattern = literal(node.right)?.value;
      if (typeof pattern !== 'string') throw new QueryError(`${clause} ${text(node)}: LIKE takes a text pattern.`);
      const { kind, value } = likePattern(pattern);
      const extra = { caseSensitive: !op.includes('ILIKE') };
      return op.startsWith('NOT') !== negated ? notNull(m, leaf(m, `not_${kind}`, value, extra)) : leaf(m, kind, value, extra);
    }
    throw new QueryError(`${clause} ${text(node)}: the operator ${op} is not supported.`);
  };
  const filters: Filter[] = [];
  for (const node of stmt.where ? chain(stmt.where, 'AND') : []) {
    // A segment is a condition of its own: `WHERE completed AND ...`.
    if (node.type === 'column_ref') {
      const segment = segmentOf(columnName(node, 'WHERE'));
      if (segment) {
        segments.push(segment);
        continue;
      }
    }
    filters.push(filterOf(node, 'WHERE', false));
  }
  if (stmt.having) filters.push(...chain(stmt.having, 'AND').map((node) => filterOf(node, 'HAVING', false)));

  // ORDER BY: selected columns; NULLs where PostgreSQL puts them by default (last ascending, first descending).
  const order: Array<[string, 'asc' | 'desc']> = [];
  for (const item of (stmt.orderby ?? []) as Node[]) {
    const column = selected(item.expr, 'ORDER BY');
    const direction = String(item.type ?? 'ASC').toLowerCase() === 'desc' ? 'desc' : 'asc';
    const nulls = item.nulls ? String(item.nulls).toUpperCase() : null;
    if (nulls && nulls !== (direction === 'asc' ? 'NULLS LAST' : 'NULLS FIRST'))
      throw new QueryError(`ORDER BY ${text(item.expr)} ${nulls}: NULLs sort last ascending and first descending.`);
    order.push([column.key, direction]);
  }

  // LIMIT and OFFSET: numbers.
  const limits = (stmt.limit?.value ?? []) as Node[];
  const number = (node: Node | undefined, clause: string): number | undefined => {
    if (!node || (node.type === 'origin' && String(node.value).toLowerCase() === 'all')) return undefined;
    const n = node.type === 'number' ? Number(node.value) : NaN;
    if (!Number.isInteger(n) || n < 0) throw new QueryError(`${clause} ${text(node)}: ${clause} takes a whole number.`);
    return n;
  };
  const offsetOnly = stmt.limit?.seperator === 'offset' && limits.length === 1;
  const limit = offsetOnly ? undefined : number(limits[0], 'LIMIT');
  const offset = number(offsetOnly ? limits[0] : limits[1], 'OFFSET');

  const unique = (list: string[]) => [...new Set(list)];
  const query: Record<string, unknown> = {
    measures: unique(columns.filter((c) => c.kind === 'measure').map((c) => c.key)),
    dimensions: unique(columns.filter((c) => c.kind === 'dimension').map((c) => c.key)),
    timeDimensions: unique(columns.filter((c) => c.kind === 'timeDimension').map((c) => c.key)).map((key) => {
      const c = columns.find((x) => x.key === key)!;
      return { dimension: c.term.member.name, granularity: c.term.granularity };
    }),
    filters,
    segments: unique(segments),
    // Without ORDER BY, the default order (as Cube's SQL API gives grouped queries).
    ...(order.length > 0 ? { order } : {}),
    timezone: 'UTC',
    ...(limit === undefined ? {} : { limit }),
    ...(offset === undefined ? {} : { offset }),
  };
  return { query, columns: columns.map(({ name, key, kind }) => ({ name, key, kind })) };
}
