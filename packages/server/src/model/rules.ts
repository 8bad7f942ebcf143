import { cubeSubject } from './describe.js';
import type { RawAccessPolicy, RawCube, RawDimension, RawMeasure, RawPolicyFilter } from './model-schema.js';
import type { Path } from './parse.js';
import type { Report } from './report.js';
import { intact, type EntitySymbol } from './symbols.js';

/**
 * What one key of a cube, member or policy requires of another: the rules a JSON Schema could
 * only state as a union whose failure reads badly. Each entity is checked on its own here;
 * references between entities are references.ts's.
 */

/** Measures whose value comes from elsewhere than their own `sql`. */
const MEASURES_WITHOUT_SQL = new Set(['count', 'rank']);

function checkMeasure(subject: string, measure: RawMeasure, path: Path, report: Report, entity: EntitySymbol): void {
  if (measure.sql === undefined && !MEASURES_WITHOUT_SQL.has(measure.type) && measure.case === undefined) {
    report.at(entity.file, path, `${subject}: measure "${measure.name}" of type "${measure.type}" needs "sql"`);
  }
}

function checkDimension(subject: string, dimension: RawDimension, path: Path, report: Report, entity: EntitySymbol): void {
  const named = `${subject}: dimension "${dimension.name}"`;
  const geo = dimension.type === 'geo';
  if (geo && (dimension.latitude === undefined || dimension.longitude === undefined)) {
    report.at(entity.file, path, `${named} of type "geo" needs "latitude" and "longitude", each with its own "sql"`);
  }
  if (geo && dimension.sql !== undefined)
    report.at(entity.file, [...path, 'sql'], `${named} of type "geo" takes "latitude" and "longitude" instead of "sql"`, { key: true });
  if (!geo && (dimension.latitude !== undefined || dimension.longitude !== undefined)) {
    report.at(entity.file, path, `${named}: only dimensions of type "geo" have "latitude" and "longitude"`);
  }
  if (dimension.type === 'switch' && dimension.values === undefined) report.at(entity.file, path, `${named} of type "switch" needs "values"`);
  if (!geo && dimension.type !== 'switch' && dimension.sql === undefined && dimension.case === undefined) {
    report.at(entity.file, path, `${named} of type "${dimension.type}" needs "sql"`);
  }
  if (dimension.granularities !== undefined && dimension.type !== 'time') {
    report.at(entity.file, [...path, 'granularities'], `${named}: only dimensions of type "time" have "granularities"`, { key: true });
  }
}

/** Names that must be unique within one cube or view: what a second definition of a name collides with. */
function checkUnique(entity: EntitySymbol, subject: string, report: Report): void {
  const seen = new Map<string, string>();
  const lists: Array<[string, string, Array<{ name: string }> | undefined]> = [
    ['dimensions', 'dimension', entity.raw.dimensions],
    ['measures', 'measure', entity.raw.measures],
    ['segments', 'segment', entity.raw.segments],
  ];
  for (const [key, kind, list] of lists) {
    for (const [member, i] of intact(entity, key, list)) {
      const earlier = seen.get(member.name);
      if (earlier)
        report.at(
          entity.file,
          [...entity.path, key, i, 'name'],
          `${subject} has two members named "${member.name}" (a ${earlier} and a ${kind}); dimensions, measures and segments of one ${entity.kind} need distinct names`,
        );
      else seen.set(member.name, kind);
    }
  }
  const cube = entity.raw as RawCube;
  const distinct = (key: 'joins' | 'pre_aggregations' | 'hierarchies', what: string) => {
    const names = new Set<string>();
    for (const [item, i] of intact<{ name: string }>(entity, key, cube[key])) {
      if (names.has(item.name)) report.at(entity.file, [...entity.path, key, i, 'name'], `${subject} has two ${what} "${item.name}"`);
      names.add(item.name);
    }
  };
  distinct('joins', 'joins to');
  distinct('pre_aggregations', 'pre-aggregations named');
  distinct('hierarchies', 'hierarchies named');
}

function checkFilter(named: string, filter: RawPolicyFilter, path: Path, report: Report, entity: EntitySymbol): void {
  const groups = (filter.or ? 1 : 0) + (filter.and ? 1 : 0);
  const leaf = filter.member !== undefined || filter.operator !== undefined || filter.values !== undefined;
  if (groups > 1 || (groups === 1 && leaf)) {
    report.at(entity.file, path, `${named}: a filter is either {member, operator, values}, {or: [...]} or {and: [...]}`);
  } else if (groups === 0 && (filter.member === undefined || filter.operator === undefined)) {
    report.at(entity.file, path, `${named}: a filter needs "member" and "operator"`);
  } else if (groups === 0 && filter.values === undefined && filter.operator !== 'set' && filter.operator !== 'notSet') {
    report.at(entity.file, path, `${named}: a filter with operator "${filter.operator}" needs "values"`);
  }
  for (const key of ['or', 'and'] as const) filter[key]?.forEach((inner, i) => checkFilter(named, inner, [...path, key, i], report, entity));
}

function checkPolicy(subject: string, policy: RawAccessPolicy, path: Path, report: Report, entity: EntitySymbol): void {
  const named = `${subject}: access policy ${(path[path.length - 1] as number) + 1}`;
  const who = [policy.role, policy.group, policy.groups].filter((value) => value !== undefined).length;
  if (who !== 1) report.at(entity.file, path, `${named} needs exactly one of "role", "group" or "groups"`);
  const rowLevel = policy.row_level;
  if (rowLevel && (rowLevel.filters === undefined) === (rowLevel.allow_all === undefined)) {
    report.at(entity.file, [...path, 'row_level'], `${named}: "row_level" needs either "filters" or "allow_all"`);
  }
  rowLevel?.filters?.forEach((filter, i) => checkFilter(named, filter, [...path, 'row_level', 'filters', i], report, entity));
}

export function checkEntityRules(entity: EntitySymbol, report: Report): void {
  const subject = cubeSubject(entity.kind, entity.name);
  if (entity.kind === 'cube') {
    const cube = entity.raw as RawCube;
    if (cube.extends === undefined && cube.sql === undefined && cube.sql_table === undefined)
      report.at(entity.file, entity.path, `${subject} needs "sql_table" or "sql"`);
    if (cube.sql !== undefined && cube.sql_table !== undefined)
      report.at(entity.file, [...entity.path, 'sql_table'], `${subject} has both "sql" and "sql_table"; use one of them`, { key: true });
  }
  for (const [measure, i] of intact(entity, 'measures', entity.raw.measures)) checkMeasure(subject, measure, [...entity.path, 'measures', i], report, entity);
  for (const [dimension, i] of intact(entity, 'dimensions', entity.raw.dimensions))
    checkDimension(subject, dimension, [...entity.path, 'dimensions', i], report, entity);
  for (const [policy, i] of intact(entity, 'access_policy', entity.raw.access_policy))
    checkPolicy(subject, policy, [...entity.path, 'access_policy', i], report, entity);
  checkUnique(entity, subject, report);
}
