import { cubeSubject } from './describe.js';
import type { RawAccessPolicy, RawCube, RawFolder, RawMeasure, RawPolicyFilter, RawPreAggregation, RawView } from './model-schema.js';
import type { Path } from './parse.js';
import { checkSql, resolve, sqlExpressions } from './references.js';
import type { Report } from './report.js';
import { didYouMean } from './suggest.js';
import { intact, type EntitySymbol, type Model } from './symbols.js';

/**
 * Members named in lists rather than in SQL: pre-aggregations, hierarchies, access policies,
 * drill members, multi-stage groupings and view folders. Each name (`status`, `CUBE.status`,
 * `orders.status`) must resolve, and where the list says what it holds, be of that kind.
 */

type Expected = 'measure' | 'dimension' | 'segment' | 'time' | 'any';

interface ListContext {
  model: Model;
  scope: EntitySymbol;
  subject: string;
  report: Report;
}

const KIND_WORDS: Record<Exclude<Expected, 'any'>, string> = { measure: 'a measure', dimension: 'a dimension', segment: 'a segment', time: 'a time dimension' };

function checkName(context: ListContext, name: string, expected: Expected, field: string, path: Path): void {
  const { model, scope, subject, report } = context;
  const resolution = resolve(model, scope, name.split('.'), true);
  if ('problem' in resolution) {
    report.at(scope.file, path, `${subject} ${resolution.problem} in ${field}${resolution.hint}`);
    return;
  }
  if (!('member' in resolution) || expected === 'any' || resolution.member.broken) return;
  const { member } = resolution;
  const fits = expected === 'time' ? member.kind === 'dimension' && member.type === 'time' : member.kind === expected;
  if (!fits) {
    const actual = member.kind === 'dimension' ? `a dimension of type "${member.type}"` : `a ${member.kind}`;
    report.at(scope.file, path, `${subject} lists "${name}" in ${field}, which must be ${KIND_WORDS[expected]}, but it is ${actual}`);
  }
}

function checkNames(context: ListContext, names: string[] | undefined, expected: Expected, field: string, path: Path): void {
  names?.forEach((name, i) => checkName(context, name, expected, field, [...path, i]));
}

/** `rollups` name other pre-aggregations: `name`, `CUBE.name` or `cube.name`. */
function checkRollups(context: ListContext, rollups: string[] | undefined, path: Path): void {
  rollups?.forEach((reference, i) => {
    const parts = reference.split('.');
    const owner = parts.length === 1 || parts[0] === 'CUBE' ? context.scope : context.model.byName.get(parts[0]!);
    const name = parts[parts.length - 1]!;
    if (!owner) {
      if (!context.model.openWorld) context.report.at(context.scope.file, [...path, i], `${context.subject} refers to unknown cube "${parts[0]}" in rollups`);
    } else if (!owner.opaque && !owner.incomplete && !owner.preAggregations.has(name)) {
      context.report.at(
        context.scope.file,
        [...path, i],
        `${context.subject} refers to unknown pre-aggregation "${name}" of cube "${owner.name}" in rollups${didYouMean(name, owner.preAggregations.keys())}`,
      );
    }
  });
}

function checkPreAggregation(context: ListContext, preAggregation: RawPreAggregation, path: Path): void {
  checkNames(context, preAggregation.measures, 'measure', 'measures', [...path, 'measures']);
  checkNames(context, preAggregation.dimensions, 'dimension', 'dimensions', [...path, 'dimensions']);
  checkNames(context, preAggregation.segments, 'segment', 'segments', [...path, 'segments']);
  if (preAggregation.time_dimension !== undefined) checkName(context, preAggregation.time_dimension, 'time', 'time_dimension', [...path, 'time_dimension']);
  preAggregation.time_dimensions?.forEach((entry, i) =>
    checkName(context, entry.dimension, 'time', 'time_dimensions', [...path, 'time_dimensions', i, 'dimension']),
  );
  preAggregation.indexes?.forEach((index, i) => checkNames(context, index.columns, 'any', `index "${index.name}"`, [...path, 'indexes', i, 'columns']));
  preAggregation.output_column_types?.forEach((entry, i) =>
    checkName(context, entry.member, 'any', 'output_column_types', [...path, 'output_column_types', i, 'member']),
  );
  checkRollups(context, preAggregation.rollups, [...path, 'rollups']);
  for (const [sqlPath, sql] of sqlExpressions(preAggregation)) {
    checkSql(context.model, context.scope, sql, context.subject, { entity: context.scope, path: [...path, ...sqlPath] }, context.report);
  }
}

function checkFilters(context: ListContext, filters: RawPolicyFilter[] | undefined, path: Path): void {
  filters?.forEach((filter, i) => {
    if (filter.member !== undefined) checkName(context, filter.member, 'any', 'row_level filters', [...path, i, 'member']);
    checkFilters(context, filter.or, [...path, i, 'or']);
    checkFilters(context, filter.and, [...path, i, 'and']);
  });
}

function checkPolicy(context: ListContext, policy: RawAccessPolicy, path: Path): void {
  for (const level of ['member_level', 'member_masking'] as const) {
    for (const list of ['includes', 'excludes'] as const) {
      const names = policy[level]?.[list];
      if (Array.isArray(names)) checkNames(context, names, 'any', `${level} ${list}`, [...path, level, list]);
    }
  }
  checkFilters(context, policy.row_level?.filters, [...path, 'row_level', 'filters']);
}

/** Own measures' lists: drill members, multi-stage groupings and time shifts. */
function checkMeasureLists(context: ListContext, measure: RawMeasure, path: Path): void {
  checkNames(context, measure.drill_members, 'any', 'drill_members', [...path, 'drill_members']);
  for (const key of ['group_by', 'reduce_by', 'add_group_by'] as const) checkNames(context, measure[key], 'dimension', key, [...path, key]);
  measure.time_shift?.forEach((shift, i) => {
    if (shift.time_dimension !== undefined) checkName(context, shift.time_dimension, 'time', 'time_shift', [...path, 'time_shift', i, 'time_dimension']);
  });
}

function checkFolder(context: ListContext, folder: RawFolder, path: Path): void {
  if (folder.includes === '*') return;
  folder.includes.forEach((item, i) => {
    const at = [...path, 'includes', i];
    if (typeof item === 'string') checkName({ ...context, subject: `${context.subject}: folder "${folder.name}"` }, item, 'any', 'includes', at);
    else checkFolder(context, item, at);
  });
}

export function checkMemberLists(model: Model, report: Report): void {
  for (const scope of model.entities) {
    const base = cubeSubject(scope.kind, scope.name);
    const context = (subject: string): ListContext => ({ model, scope, subject, report });
    for (const [measure, i] of intact(scope, 'measures', scope.raw.measures))
      checkMeasureLists(context(`${base}: measure "${measure.name}"`), measure, [...scope.path, 'measures', i]);
    for (const [policy, i] of intact(scope, 'access_policy', scope.raw.access_policy))
      checkPolicy(context(`${base}: access policy ${i + 1}`), policy, [...scope.path, 'access_policy', i]);
    if (scope.kind === 'view') {
      for (const [folder, i] of intact(scope, 'folders', (scope.raw as RawView).folders)) checkFolder(context(base), folder, [...scope.path, 'folders', i]);
      continue;
    }
    const cube = scope.raw as RawCube;
    for (const [p, i] of intact(scope, 'pre_aggregations', cube.pre_aggregations))
      checkPreAggregation(context(`${base}: pre-aggregation "${p.name}"`), p, [...scope.path, 'pre_aggregations', i]);
    for (const [h, i] of intact(scope, 'hierarchies', cube.hierarchies))
      checkNames(context(`${base}: hierarchy "${h.name}"`), h.levels, 'dimension', 'levels', [...scope.path, 'hierarchies', i, 'levels']);
    if (cube.sql !== undefined) checkSql(model, scope, cube.sql, base, { entity: scope, path: [...scope.path, 'sql'] }, report);
    if (cube.refresh_key?.sql !== undefined)
      checkSql(model, scope, cube.refresh_key.sql, base, { entity: scope, path: [...scope.path, 'refresh_key', 'sql'] }, report);
  }
}
