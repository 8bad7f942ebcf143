import { describe, expect, it } from 'vitest';
import { STARTER_MODEL, STARTER_MODEL_PATH } from '../src/areas/data-model/starter-model.js';
import { isModelFile, validateModel, type ModelError, type ModelFile } from '../src/model/index.js';

/**
 * The data-model validator: each rule the semantic layer enforces has a test with a small model
 * that breaks it (and, where the rule has a legal side, a model that keeps it), asserting the
 * message, the file and the position of the error.
 */

/** Lets a test write YAML indented with the code; line 1 is the line after the opening backtick. */
function yaml(text: string): string {
  const lines = text.replace(/^\n/, '').split('\n');
  const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length));
  return lines.map((line) => line.slice(indent)).join('\n');
}

const file = (path: string, content: string): ModelFile => ({ path, content });
const cubesFile = (content: string) => file('model/cubes/test.yml', yaml(content));

/** The errors of a model, as `message @ line:column`, for assertions that read like the output. */
function errorsOf(...files: ModelFile[]): ModelError[] {
  return validateModel(files).errors;
}

function onlyError(...files: ModelFile[]): ModelError {
  const errors = errorsOf(...files);
  expect(errors, JSON.stringify(errors, null, 2)).toHaveLength(1);
  return errors[0]!;
}

const ORDERS = yaml(`
  cubes:
    - name: orders
      sql_table: public.orders
      joins:
        - name: customers
          relationship: many_to_one
          sql: "{CUBE}.customer_id = {customers.id}"
      dimensions:
        - name: id
          sql: id
          type: number
          primary_key: true
        - name: status
          sql: status
          type: string
        - name: created_at
          sql: created_at
          type: time
      measures:
        - name: count
          type: count
        - name: total
          sql: amount
          type: sum
`);

const CUSTOMERS = yaml(`
  cubes:
    - name: customers
      sql_table: public.customers
      dimensions:
        - name: id
          sql: id
          type: number
          primary_key: true
        - name: name
          sql: name
          type: string
        - name: city
          sql: city
          type: string
      measures:
        - name: count
          type: count
`);

const ordersFile = () => file('model/cubes/orders.yml', ORDERS);
const customersFile = () => file('model/cubes/customers.yml', CUSTOMERS);

describe('data-model validator', () => {
  it('accepts the model the other tests break', () => {
    const result = validateModel([ordersFile(), customersFile()]);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.cubesCount).toBe(2);
  });

  it('rule: YAML syntax errors carry the line and column the parser gives', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          title: "unterminated
    `),
    );
    expect(error.fileName).toBe('model/cubes/test.yml');
    expect(error.message).toMatch(/^YAML syntax error: Missing closing "quote/);
    expect(error.line).toBe(5);
    expect(error.column).toBe(1);

    const duplicateKey = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          sql_table: orders_v2
    `),
    );
    expect(duplicateKey.message).toBe('YAML syntax error: Map keys must be unique');
    expect([duplicateKey.line, duplicateKey.column]).toEqual([4, 5]);
  });

  describe('rule: hostile YAML is refused as an error of its file, quickly, with nothing read from it', () => {
    const within = (ms: number, fn: () => void) => {
      const started = Date.now();
      fn();
      expect(Date.now() - started).toBeLessThan(ms);
    };
    let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let i = 0, prev = 'a'; i < 9; prev = `b${i}`, i++) bomb += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(',')}]\n`;

    it('an alias bomb (billion laughs), also through merge keys, past MAX_YAML_ALIASES', () => {
      within(1000, () => expect(onlyError(file('model/bomb.yml', bomb)).message).toMatch(/^YAML aliases expand too far .*at most 100 aliases\.$/));
      let merges = 'a: &a { x: 1 }\n';
      for (let i = 0, prev = 'a'; i < 30; prev = `m${i}`, i++) merges += `m${i}: &m${i}\n  <<: [*${prev}, *${prev}]\n  k${i}: 1\n`;
      within(1000, () => expect(onlyError(file('model/merges.yml', merges)).message).toMatch(/^YAML aliases expand too far/));
      // Aliases a model really uses still work.
      expect(
        errorsOf(
          file('model/ok.yml', 'cubes:\n  - name: a\n    sql_table: a\n    measures:\n      - &c { name: c, type: count }\n      - { <<: *c, name: d }\n'),
        ),
      ).toEqual([]);
    });

    it('a document nested deeper than MAX_YAML_DEPTH, in flow or block style, before the parser sees it', () => {
      for (const content of [
        '['.repeat(1_000_000),
        '- '.repeat(500_000),
        '{a: '.repeat(200_000),
        `x: [&a ']]]]' ${'['.repeat(100_000)}`,
        `x: [ # ]]]]\n ${'['.repeat(100_000)}`,
      ]) {
        within(1000, () =>
          expect(onlyError(file('model/deep.yml', content))).toMatchObject({
            fileName: 'model/deep.yml',
            line: expect.any(Number),
            message: 'The file nests deeper than 64 levels, the most a YAML model file may.',
          }),
        );
      }
      const seventy = Array.from({ length: 70 }, (_, i) => `${'  '.repeat(i)}k:`).join('\n') + ' 1\n';
      expect(onlyError(file('model/deep.yml', seventy))).toMatchObject({
        line: 65,
        message: 'The file nests deeper than 64 levels, the most a YAML model file may.',
      });
      // Brackets in SQL and quoted text are not nesting.
      expect(
        errorsOf(
          file('model/ok.yml', `cubes:\n  - name: a\n    sql: "select arr[1], '${'['.repeat(100)}' from t"\n    measures:\n      - { name: c, type: count }\n`),
        ),
      ).toEqual([]);
    });

    it('a file over MAX_MODEL_FILE_BYTES, YAML or JavaScript, read or not (a push is not held to the files API’s limit)', () => {
      within(1000, () =>
        expect(onlyError(file('model/big.yml', `x: "${'a'.repeat(1024 * 1024)}"\n`)).message).toBe(
          'The file is 1048582 bytes; a model file may hold at most 1048576.',
        ),
      );
      expect(onlyError(file('model/big.js', `// ${'a'.repeat(1024 * 1024)}`)).message).toBe(
        'The file is 1048579 bytes; a model file may hold at most 1048576.',
      );
      expect(onlyError({ path: 'model/huge.yml', content: '', unreadBytes: 5e9 }).message).toBe(
        'The file is 5000000000 bytes; a model file may hold at most 1048576.',
      );
    });

    it('tags the semantic layer would not read: !!js/function, custom ones', () => {
      expect(onlyError(file('model/tags.yml', 'cubes: !!js/function "function () { return process.env }"\n'))).toMatchObject({
        line: 1,
        column: 8,
        message: 'YAML tag not allowed: Unresolved tag: tag:yaml.org,2002:js/function',
      });
      expect(onlyError(file('model/tags.yml', 'cubes:\n  - name: !custom a\n')).message).toBe('YAML tag not allowed: Unresolved tag: !custom');
    });
  });

  it('rule: a model file is a mapping with cubes and/or views lists at its top level', () => {
    for (const content of ['- name: orders\n', 'services:\n  db:\n    image: postgres\n', 'just text\n']) {
      const error = onlyError(file('model/other.yml', content));
      expect(error).toEqual({
        message: 'A model file must be a mapping with a "cubes:" list, a "views:" list or both at its top level',
        fileName: 'model/other.yml',
        line: 1,
        column: 1,
      });
    }
    const notAList = onlyError(file('model/cubes/x.yml', 'cubes:\n  name: orders\n'));
    expect(notAList).toMatchObject({ message: 'Model file: "cubes" must be a list', line: 2, column: 3 });
    // Comments only, or nothing: the file defines nothing and is no error.
    expect(validateModel([file('model/empty.yml', '# nothing yet\n')]).valid).toBe(true);
  });

  it('rule: unknown keys in cubes and members are errors, with the likely key suggested', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          refresh_keys:
            every: 1 hour
          dimensions:
            - name: id
              sql: id
              type: number
              primay_key: true
            - name: status
              sql: status
              type: string
              primaryKey: false
    `),
    );
    expect(errors).toEqual([
      { message: 'Cube "orders" has unknown key "refresh_keys"; did you mean "refresh_key"?', fileName: 'model/cubes/test.yml', line: 4, column: 5 },
      {
        message: 'Cube "orders": dimension "id" has unknown key "primay_key"; did you mean "primary_key"?',
        fileName: 'model/cubes/test.yml',
        line: 10,
        column: 9,
      },
      {
        message: 'Cube "orders": dimension "status" has unknown key "primaryKey"; did you mean "primary_key"?',
        fileName: 'model/cubes/test.yml',
        line: 14,
        column: 9,
      },
    ]);
  });

  it('rule: the documented vocabulary of members is accepted', () => {
    const result = validateModel([
      cubesFile(`
      cubes:
        - name: events
          sql_table: events
          title: Events
          description: Every event
          public: true
          data_source: default
          meta: { owner: analytics }
          refresh_key: { every: 1 hour }
          dimensions:
            - name: id
              sql: id
              type: number
              primary_key: true
              public: true
            - name: at
              sql: at
              type: time
              order: desc
              granularities:
                - name: fiscal_year
                  interval: 1 year
                  origin: "2025-04-01"
            - name: kind
              sql: kind
              type: string
              format: id
              shown: true
              meta: { any: value }
              sub_query: false
              propagate_filters_to_sub_query: false
            - name: size
              type: string
              case:
                when:
                  - sql: "{CUBE}.size > 10"
                    label: large
                else:
                  label: small
          measures:
            - name: count
              type: count
              title: Events
              description: How many
              drill_members: [id, kind]
              rolling_window:
                trailing: 7 day
                offset: start
            - name: kinds
              sql: kind
              type: count_distinct_approx
              filters:
                - sql: "{CUBE}.kind <> 'noise'"
            - name: median_size
              sql: "PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY size)"
              type: number_agg
              format: "$,.2f"
    `),
    ]);
    expect(result.errors).toEqual([]);
  });

  it('rule: cube names are identifiers', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: 2orders
          sql_table: orders
    `),
    );
    expect(error.message).toBe('Cube "2orders": "name" "2orders" is not a name of letters, digits and underscores, not starting with a digit');
    expect([error.line, error.column]).toEqual([2, 11]);
  });

  it('rule: a cube needs sql_table or sql, not both, unless it extends another', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: nothing
          title: No table
        - name: both
          sql: SELECT 1
          sql_table: t
        - name: child
          extends: both
    `),
    );
    expect(errors.map((e) => [e.message, e.line, e.column])).toEqual([
      ['Cube "nothing" needs "sql_table" or "sql"', 2, 5],
      ['Cube "both" has both "sql" and "sql_table"; use one of them', 6, 5],
    ]);
  });

  it('rule: measure types are those of the model language', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          measures:
            - name: total
              sql: amount
              type: summ
    `),
    );
    expect(error.message).toBe(
      'Cube "orders": measure "total" has unknown type "summ"; expected one of count, count_distinct, count_distinct_approx, sum, avg, min, max, number, number_agg, string, time, boolean, running_total, rank; did you mean "sum"?',
    );
    expect([error.fileName, error.line, error.column]).toEqual(['model/cubes/test.yml', 7, 15]);

    const types = [
      'count',
      'count_distinct',
      'count_distinct_approx',
      'sum',
      'avg',
      'min',
      'max',
      'number',
      'number_agg',
      'string',
      'time',
      'boolean',
      'running_total',
    ];
    const measures = types.map((type) => `      - name: m_${type}\n        sql: amount\n        type: ${type}`).join('\n');
    expect(errorsOf(file('model/all.yml', `cubes:\n  - name: orders\n    sql_table: orders\n    measures:\n${measures}\n`))).toEqual([]);
  });

  it('rule: measures other than count need sql', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          measures:
            - name: count
              type: count
            - name: total
              type: sum
    `),
    );
    expect(error).toEqual({ message: 'Cube "orders": measure "total" of type "sum" needs "sql"', fileName: 'model/cubes/test.yml', line: 7, column: 9 });
  });

  it('rule: dimension types are those of the model language, and geo takes latitude and longitude instead of sql', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: shops
          sql_table: shops
          dimensions:
            - name: location
              type: geo
              latitude: { sql: lat }
            - name: place
              type: geo
              sql: place
              latitude: { sql: lat }
              longitude: { sql: lng }
            - name: opened
              sql: opened
              type: date
            - name: name
              type: string
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '5:9 Cube "shops": dimension "location" of type "geo" needs "latitude" and "longitude", each with its own "sql"',
      '10:9 Cube "shops": dimension "place" of type "geo" takes "latitude" and "longitude" instead of "sql"',
      '15:15 Cube "shops": dimension "opened" has unknown type "date"; expected one of string, number, time, boolean, geo, switch',
      '16:9 Cube "shops": dimension "name" of type "string" needs "sql"',
    ]);
    const geo = validateModel([
      cubesFile(`
      cubes:
        - name: shops
          sql_table: shops
          dimensions:
            - name: location
              type: geo
              latitude: { sql: lat }
              longitude: { sql: lng }
    `),
    ]);
    expect(geo.errors).toEqual([]);
    expect(geo.artifact!.cubes[0]!.dimensions[0]).toMatchObject({ name: 'location', type: 'geo', sql: null, latitude: 'lat', longitude: 'lng' });
  });

  it('rule: primary_key is a boolean on dimensions only', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          dimensions:
            - name: id
              sql: id
              type: number
              primary_key: "yes"
          measures:
            - name: count
              type: count
              primary_key: true
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '8:22 Cube "orders": dimension "id": "primary_key" must be true or false',
      '12:9 Cube "orders": measure "count" has unknown key "primary_key"',
    ]);
  });

  it('rule: join relationships are one_to_one, one_to_many, many_to_one or their has_one, has_many, belongs_to aliases, normalised', () => {
    const aliases = yaml(`
      cubes:
        - name: a
          sql_table: a
          joins:
            - name: b
              relationship: has_one
              sql: "{a}.id = {b}.a_id"
            - name: c
              relationship: has_many
              sql: "{CUBE}.id = {c}.a_id"
            - name: d
              relationship: belongs_to
              sql: "{CUBE}.d_id = {d.id}"
        - name: b
          sql_table: b
        - name: c
          sql_table: c
        - name: d
          sql_table: d
          dimensions:
            - name: id
              sql: id
              type: number
              primary_key: true
    `);
    const result = validateModel([file('model/cubes/abcd.yml', aliases)]);
    expect(result.errors).toEqual([]);
    expect(result.artifact!.cubes[0]!.joins).toEqual([
      { name: 'b', relationship: 'one_to_one', sql: '{a}.id = {b}.a_id' },
      { name: 'c', relationship: 'one_to_many', sql: '{CUBE}.id = {c}.a_id' },
      { name: 'd', relationship: 'many_to_one', sql: '{CUBE}.d_id = {d.id}' },
    ]);

    const error = onlyError(file('model/cubes/abcd.yml', aliases.replace('has_many', 'many_to_many')));
    expect(error.message).toBe(
      'Join "c" of cube "a" has unknown relationship "many_to_many"; expected one of one_to_one, one_to_many, many_to_one (or has_one, has_many, belongs_to)',
    );
    expect([error.line, error.column]).toEqual([9, 23]);
  });

  it('rule: joins need a name, sql and a relationship', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: a
          sql_table: a
          joins:
            - name: a
              sql: "1 = 1"
    `),
    );
    expect(error).toMatchObject({ message: 'Join "a" of cube "a" is missing "relationship"', line: 5, column: 9 });
  });

  it('rule: segments need sql, and their references resolve', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          dimensions:
            - name: status
              sql: status
              type: string
          segments:
            - name: empty
            - name: done
              sql: "{CUBE.state} = 'done'"
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '9:9 Cube "orders": segment "empty" is missing "sql"',
      '11:15 Cube "orders": segment "done" refers to unknown member "state" of cube "orders" in {CUBE.state}; did you mean "status"?',
    ]);
  });

  it('rule: pre-aggregations have a known type and every member they name resolves to a member of that kind', () => {
    const errors = errorsOf(
      ordersFile(),
      customersFile(),
      file(
        'model/cubes/rollups.yml',
        yaml(`
        cubes:
          - name: order_rollups
            extends: orders
            pre_aggregations:
              - name: main
                measures: [CUBE.count, total, orders.total, stats]
                dimensions: [status, customers.city, count]
                time_dimension: status
                granularity: day
                partition_granularity: month
              - name: raw
                type: original_sqll
              - name: joined
                type: rollup_join
                rollups: [main, customers.missing]
      `),
      ),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '6:53 Cube "order_rollups": pre-aggregation "main" refers to unknown member "stats" of cube "order_rollups" in measures; did you mean "status"?',
      '7:46 Cube "order_rollups": pre-aggregation "main" lists "count" in dimensions, which must be a dimension, but it is a measure',
      '8:25 Cube "order_rollups": pre-aggregation "main" lists "status" in time_dimension, which must be a time dimension, but it is a dimension of type "string"',
      '12:15 Cube "order_rollups": pre-aggregation "raw" has unknown type "original_sqll"; expected one of rollup, original_sql, rollup_join, rollup_lambda, auto_rollup; did you mean "original_sql"?',
      '15:25 Cube "order_rollups": pre-aggregation "joined" refers to unknown pre-aggregation "missing" of cube "customers" in rollups',
    ]);
  });

  it('rule: access policies name a role or group, and the members they include, exclude and filter on resolve', () => {
    const errors = errorsOf(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          dimensions:
            - name: status
              sql: status
              type: string
            - name: region
              sql: region
              type: string
          access_policy:
            - group: sales
              member_level:
                includes: [status, regoin]
              row_level:
                filters:
                  - member: region
                    operator: equals
                    values: ["{ securityContext.region }"]
                  - or:
                      - member: orders.country
                        operator: equals
                        values: [FR]
            - member_level:
                excludes: "*"
            - role: admin
              row_level:
                allow_all: true
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '14:30 Cube "orders": access policy 1 refers to unknown member "regoin" of cube "orders" in member_level includes; did you mean "region"?',
      '21:27 Cube "orders": access policy 1 refers to unknown member "country" of cube "orders" in row_level filters',
      '24:9 Cube "orders": access policy 2 needs exactly one of "role", "group" or "groups"',
    ]);
  });

  it("rule: cube and view names are unique across files, and a view may not take a cube's name", () => {
    const errors = errorsOf(
      ordersFile(),
      customersFile(),
      file('model/cubes/orders_again.yml', 'cubes:\n  - name: orders\n    sql_table: orders2\n'),
      file('model/views/orders.yml', 'views:\n  - name: orders\n    cubes:\n      - join_path: orders\n        includes: "*"\n'),
    );
    expect(errors).toEqual([
      {
        message: 'Cube "orders" has the same name as another cube in model/cubes/orders.yml (line 2); cube and view names must be unique',
        fileName: 'model/cubes/orders_again.yml',
        line: 2,
        column: 11,
      },
      {
        message: 'View "orders" has the same name as a cube in model/cubes/orders.yml (line 2); cube and view names must be unique',
        fileName: 'model/views/orders.yml',
        line: 2,
        column: 11,
      },
    ]);
  });

  it('rule: member names are unique within a cube, as are join and pre-aggregation names', () => {
    const errors = errorsOf(
      customersFile(),
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          joins:
            - name: customers
              relationship: many_to_one
              sql: "{CUBE}.customer_id = {customers.id}"
            - name: customers
              relationship: many_to_one
              sql: "{CUBE}.buyer_id = {customers.id}"
          dimensions:
            - name: status
              sql: status
              type: string
          measures:
            - name: status
              type: count
          segments:
            - name: status
              sql: "{CUBE}.status = 'x'"
          pre_aggregations:
            - name: main
              type: original_sql
            - name: main
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '8:15 Cube "orders" has two joins to "customers"',
      '16:15 Cube "orders" has two members named "status" (a dimension and a measure); dimensions, measures and segments of one cube need distinct names',
      '19:15 Cube "orders" has two members named "status" (a dimension and a segment); dimensions, measures and segments of one cube need distinct names',
      '24:15 Cube "orders" has two pre-aggregations named "main"',
    ]);
  });

  it('rule: references in sql resolve: {CUBE}.column is raw, {member}, {CUBE.member} and {cube.member} name members', () => {
    const fine = validateModel([
      customersFile(),
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          dimensions:
            - name: amount
              sql: "{CUBE}.amount"
              type: number
            - name: customer_city
              sql: "{customers.city}"
              type: string
              sub_query: true
          measures:
            - name: total
              sql: "{amount}"
              type: sum
            - name: doubled
              sql: "{CUBE.total} * 2 + {orders.total}"
              type: number
            - name: json_literal
              sql: "MAX(payload->>'{\\"a\\": 1}') || '{1,2}' || {FILTER_PARAMS.orders.amount.filter('x')}"
              type: string
    `),
    ]);
    expect(fine.errors).toEqual([]);

    const errors = errorsOf(
      customersFile(),
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          measures:
            - name: total
              sql: "{amount}"
              type: sum
            - name: ratio
              sql: "{CUBE.totl} / {customers.cnt} + {customer.count}"
              type: number
    `),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '6:15 Cube "orders": measure "total" refers to unknown member "amount" of cube "orders" in {amount}',
      '9:15 Cube "orders": measure "ratio" refers to unknown member "totl" of cube "orders" in {CUBE.totl}; did you mean "total"?',
      '9:29 Cube "orders": measure "ratio" refers to unknown member "cnt" of cube "customers" in {customers.cnt}',
      '9:47 Cube "orders": measure "ratio" refers to unknown cube "customer" in {customer.count}; did you mean "customers"?',
    ]);
  });

  it('rule: join targets must exist', () => {
    const missingTarget = onlyError(customersFile(), file('model/cubes/orders.yml', ORDERS.replace('- name: customers', '- name: customer')));
    expect(missingTarget).toEqual({
      message: 'Join "customer" of cube "orders" refers to unknown cube "customer"; did you mean "customers"?',
      fileName: 'model/cubes/orders.yml',
      line: 5,
      column: 15,
    });

    const errors = errorsOf(customersFile(), file('model/cubes/orders.yml', ORDERS.replace('{customers.id}', '{customer.id}')));
    expect(errors).toEqual([
      {
        message: 'Join "customers" of cube "orders" refers to unknown cube "customer" in {customer.id}; did you mean "customers"?',
        fileName: 'model/cubes/orders.yml',
        line: 7,
        column: 36,
      },
    ]);
  });

  it('rule: view join paths follow joins declared on each cube of the path', () => {
    const errors = errorsOf(
      ordersFile(),
      customersFile(),
      file(
        'model/views/v.yml',
        yaml(`
        views:
          - name: v
            cubes:
              - join_path: orders.customers
                includes: [name]
              - join_path: customers.orders
                includes: [status]
              - join_path: ordrs
                includes: "*"
      `),
      ),
    );
    expect(errors).toEqual([
      { message: 'View "v": cubes entry "customers.orders": cube "customers" has no join to "orders"', fileName: 'model/views/v.yml', line: 6, column: 30 },
      { message: 'View "v": cubes entry "ordrs" refers to unknown cube "ordrs"; did you mean "orders"?', fileName: 'model/views/v.yml', line: 8, column: 20 },
    ]);
  });

  it('rule: what a view includes and excludes must exist on the last cube of its join path', () => {
    const errors = errorsOf(
      ordersFile(),
      customersFile(),
      file(
        'model/views/v.yml',
        yaml(`
        views:
          - name: v
            cubes:
              - join_path: orders.customers
                includes: [nmae, { name: city, alias: customer_city }]
              - join_path: orders
                includes: "*"
                excludes: [id, stauts]
      `),
      ),
    );
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '5:20 View "v": cubes entry "orders.customers" includes unknown member "nmae" of cube "customers"; did you mean "name"?',
      '8:24 View "v": cubes entry "orders" excludes unknown member "stauts" of cube "orders"; did you mean "status"?',
    ]);
  });

  it('rule: a view exposes members under their alias and prefix, and two under one name is an error', () => {
    const view = yaml(`
      views:
        - name: v
          cubes:
            - join_path: orders
              includes: [status, count]
            - join_path: orders.customers
              prefix: true
              includes: [name, count]
            - join_path: orders.customers
              alias: buyer
              prefix: true
              includes: [{ name: city, alias: town }]
    `);
    const result = validateModel([ordersFile(), customersFile(), file('model/views/v.yml', view)]);
    expect(result.errors).toEqual([]);
    expect(result.artifact!.views[0]!.members.map((m) => [m.name, m.member])).toEqual([
      ['status', 'orders.status'],
      ['count', 'orders.count'],
      ['customers_name', 'customers.name'],
      ['customers_count', 'customers.count'],
      ['buyer_town', 'customers.city'],
    ]);

    const unprefixed = view.replace(/^ *prefix: true\n/m, '');
    expect(unprefixed).not.toBe(view);
    const clash = onlyError(ordersFile(), customersFile(), file('model/views/v.yml', unprefixed));
    expect(clash).toEqual({
      message: 'View "v": member "count" is exposed twice, as orders.count and as customers.count; give one an alias or set prefix: true',
      fileName: 'model/views/v.yml',
      line: 7,
      column: 26,
    });
  });

  it("rule: a view's own members read cube members through {cube.member}", () => {
    const view = yaml(`
      views:
        - name: v
          cubes:
            - join_path: orders
              includes: [count]
          measures:
            - name: average
              sql: "{orders.total} / {count}"
              type: number
            - name: broken
              sql: "{orders.totl}"
              type: number
    `);
    const errors = errorsOf(ordersFile(), customersFile(), file('model/views/v.yml', view));
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '11:15 View "v": measure "broken" refers to unknown member "totl" of cube "orders" in {orders.totl}; did you mean "total"?',
    ]);
    const result = validateModel([ordersFile(), customersFile(), file('model/views/v.yml', view.replace('{orders.totl}', '{orders.total}'))]);
    expect(result.artifact!.views[0]!.members.find((m) => m.name === 'average')).toMatchObject({
      member: null,
      join_path: null,
      sql: '{orders.total} / {count}',
      type: 'number',
    });
  });

  it('rule: no circular member references', () => {
    const error = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          measures:
            - name: a
              sql: "{b} + 1"
              type: number
            - name: b
              sql: "{CUBE.c} * 2"
              type: number
            - name: c
              sql: "{orders.a}"
              type: number
            - name: d
              sql: "{a}"
              type: number
    `),
    );
    expect(error).toEqual({
      message: 'Circular reference: orders.a -> orders.b -> orders.c -> orders.a',
      fileName: 'model/cubes/test.yml',
      line: 6,
      column: 14,
    });

    const self = onlyError(
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          measures:
            - name: total
              sql: "{total} + 1"
              type: number
    `),
    );
    expect(self.message).toBe('Circular reference: orders.total -> orders.total');
  });

  it('rule: a cube extends another by name, inheriting and overriding its members; the parent must exist and extends may not loop', () => {
    const model = yaml(`
      cubes:
        - name: base_events
          sql_table: events
          joins:
            - name: customers
              relationship: many_to_one
              sql: "{CUBE}.customer_id = {customers.id}"
          dimensions:
            - name: id
              sql: id
              type: number
              primary_key: true
            - name: kind
              sql: kind
              type: string
          measures:
            - name: count
              type: count
        - name: page_views
          extends: base_events
          dimensions:
            - name: kind
              sql: "'page_view'"
              type: string
            - name: path
              sql: path
              type: string
          measures:
            - name: per_customer
              sql: "{count} / {customers.count}"
              type: number
    `);
    const result = validateModel([customersFile(), file('model/cubes/events.yml', model)]);
    expect(result.errors).toEqual([]);
    const pageViews = result.artifact!.cubes.find((c) => c.name === 'page_views')!;
    expect(pageViews.sql_table).toBe('events');
    expect(pageViews.dimensions.map((d) => [d.name, d.sql])).toEqual([
      ['id', 'id'],
      ['kind', "'page_view'"],
      ['path', 'path'],
    ]);
    expect(pageViews.measures.map((m) => m.name)).toEqual(['count', 'per_customer']);
    expect(pageViews.joins.map((j) => j.name)).toEqual(['customers']);

    const unknownParent = onlyError(customersFile(), file('model/cubes/events.yml', model.replace('extends: base_events', 'extends: base_event')));
    expect(unknownParent).toMatchObject({ message: 'Cube "page_views" extends unknown cube "base_event"', line: 20, column: 14 });

    const loop = errorsOf(
      cubesFile(`
      cubes:
        - name: a
          extends: c
        - name: b
          extends: a
        - name: c
          extends: b
    `),
    );
    expect(loop).toEqual([{ message: 'Circular extends: a -> c -> b -> a', fileName: 'model/cubes/test.yml', line: 3, column: 14 }]);
  });

  it('rule: a view may extend a view, taking its members before its own', () => {
    const views = yaml(`
      views:
        - name: base_sales
          cubes:
            - join_path: orders
              includes: [status, count]
        - name: sales
          extends: base_sales
          cubes:
            - join_path: orders.customers
              includes: [city]
          access_policy:
            - group: sales
              member_level:
                includes: [status, city, citty]
    `);
    const errors = errorsOf(ordersFile(), customersFile(), file('model/views/sales.yml', views));
    expect(errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '14:36 View "sales": access policy 1 refers to unknown member "citty" of view "sales" in member_level includes; did you mean "city"?',
    ]);
    const result = validateModel([ordersFile(), customersFile(), file('model/views/sales.yml', views.replace(', citty', ''))]);
    expect(result.artifact!.views.find((v) => v.name === 'sales')!.members.map((m) => m.member)).toEqual(['orders.status', 'orders.count', 'customers.city']);
  });

  it("reads YAML anchors and merge keys, as the semantic layer's YAML reader does", () => {
    const result = validateModel([
      cubesFile(`
      cubes:
        - name: orders
          sql_table: orders
          dimensions:
            - &number { name: id, sql: id, type: number, primary_key: true }
            - <<: *number
              name: amount
              sql: amount
              primary_key: false
    `),
    ]);
    expect(result.errors).toEqual([]);
    expect(result.artifact!.cubes[0]!.dimensions.map((d) => [d.name, d.type, d.primary_key])).toEqual([
      ['id', 'number', true],
      ['amount', 'number', false],
    ]);
  });

  it('rule: .js model files are refused with a clear error (never run); a syntax error is reported as such; a join to a cube they would define is not an unknown cube', () => {
    const broken = onlyError(file('model/cubes/legacy.js', 'cube(`legacy`, {\n  sql: `SELECT 1`,\n  measures: { count: { type: `count` } \n});\n'));
    expect(broken).toEqual({ message: "JavaScript syntax error: Unexpected token ')'", fileName: 'model/cubes/legacy.js', line: 4, column: 2 });
    const legacy = onlyError(file('model/cubes/legacy.js', 'cube(`legacy`, { sql: `SELECT 1`, measures: { count: { type: `count` } } });\n'));
    expect(legacy).toMatchObject({ fileName: 'model/cubes/legacy.js', line: 1, column: 1 });
    expect(legacy.message).toMatch(/^JavaScript model files \(cube\(\.\.\.\), view\(\.\.\.\)\) are not supported: write the model in YAML/);
    // Never run: a file that would throw is refused the same way, not run.
    expect(onlyError(file('model/cubes/throws.js', 'throw new Error("ran");\n')).message).toMatch(/^JavaScript model files/);
    // The refusal alone: a join to a cube the file would define is not reported as unknown too.
    const withJs = validateModel([
      file('model/cubes/orders.yml', ORDERS.replace('{customers.id}', '{customers.id} AND {CUBE.sttus} = 1')),
      file('model/cubes/customers.js', 'cube(`customers`, { sql_table: `customers` });\n'),
    ]);
    expect(withJs.valid).toBe(false);
    expect(withJs.errors.map((e) => e.message.slice(0, 40))).toEqual(
      ['Join "customers" of cube "orders" refers', 'JavaScript model files (cube(...), view('].sort(),
    );
  });

  it('rule: YAML files with Jinja templates are refused with a clear error, the plain files still checked', () => {
    const template = 'cubes:\n{% for n in range(3) %}\n  - name: t_{{ n }}\n    sql_table: t{{ n }}\n{% endfor %}\n';
    const result = validateModel([file('model/cubes/generated.yml', template), file('model/cubes/orders.yml', ORDERS)]);
    expect(result.errors).toEqual([
      {
        message: 'YAML with Jinja templates ({% ... %}, {{ ... }}) is not supported: write the cubes and views out in plain YAML.',
        fileName: 'model/cubes/generated.yml',
        line: 1,
        column: 1,
      },
    ]);
    expect(result.cubesCount).toBe(1);
  });

  it('rule: a file that cannot be read does not cascade into errors about what it defines', () => {
    // The customers file has a syntax error: the join to customers is not reported as unknown.
    const errors = errorsOf(ordersFile(), file('model/cubes/customers.yml', 'cubes:\n  - name: customers\n    sql_table: "customers\n'));
    expect(errors.map((e) => e.fileName)).toEqual(['model/cubes/customers.yml']);
    // A member that breaks the schema is known by name only; the rest of its cube is still checked.
    const other = cubesFile(`
      cubes:
        - name: other
          sql: "SELECT {customers.name}, {customers.anything}, {orders.nothing}"
    `);
    const partly = errorsOf(ordersFile(), file('model/cubes/customers.yml', CUSTOMERS.replace('type: string', 'type: text')), other);
    expect(partly.map((e) => e.message)).toEqual([
      'Cube "customers": dimension "name" has unknown type "text"; expected one of string, number, time, boolean, geo, switch',
      'Cube "other" refers to unknown member "anything" of cube "customers" in {customers.anything}',
      'Cube "other" refers to unknown member "nothing" of cube "orders" in {orders.nothing}',
    ]);
    // A cube whose lists are not lists is known by name only: nothing is concluded about its members.
    const opaque = errorsOf(
      ordersFile(),
      file('model/cubes/customers.yml', 'cubes:\n  - name: customers\n    sql_table: customers\n    dimensions: id\n'),
      other,
    );
    expect(opaque.map((e) => e.message)).toEqual([
      'Cube "customers": "dimensions" must be a list',
      'Cube "other" refers to unknown member "nothing" of cube "orders" in {orders.nothing}',
    ]);
  });

  it('sorts errors by file, line and column, the same on every run whatever the order of the files', () => {
    const files = [
      file('model/b.yml', 'cubes:\n  - name: b\n    sql_table: b\n    measures:\n      - name: x\n        type: nope\n'),
      file('model/a.yml', 'cubes:\n  - name: a\n    measures:\n      - name: y\n        type: sum\n'),
      file('model/c.js', 'cube(('),
    ];
    const first = validateModel(files).errors;
    expect(first.map((e) => [e.fileName, e.line])).toEqual([
      ['model/a.yml', 2],
      ['model/a.yml', 4],
      ['model/b.yml', 6],
      ['model/c.js', 1],
    ]);
    expect(validateModel([...files].reverse()).errors).toEqual(first);
  });

  it('validates a model with everything in it, counts its cubes and compiles views to the cube members they expose', () => {
    const views = yaml(`
      views:
        - name: sales
          description: Orders with their customers
          cubes:
            - join_path: orders
              includes:
                - status
                - name: total
                  alias: revenue
                  title: Revenue
                - count
                - completed
            - join_path: orders.customers
              prefix: true
              includes: "*"
              excludes: [id]
          measures:
            - name: revenue_per_order
              sql: "{revenue} / {count}"
              type: number
          folders:
            - name: Customers
              includes: [customers_name, customers_city]
          access_policy:
            - group: sales
              member_level:
                includes: [status, revenue]
    `);
    const orders = yaml(`
      cubes:
        - name: orders
          sql_table: public.orders
          title: Orders
          description: One row per order
          joins:
            - name: customers
              relationship: belongs_to
              sql: "{CUBE}.customer_id = {customers.id}"
          dimensions:
            - name: id
              sql: id
              type: number
              primary_key: true
            - name: status
              sql: status
              type: string
            - name: created_at
              sql: created_at
              type: time
          measures:
            - name: count
              type: count
            - name: total
              sql: amount
              type: sum
              format: currency
          segments:
            - name: completed
              sql: "{CUBE}.status = 'completed'"
          pre_aggregations:
            - name: by_status
              measures: [CUBE.count, total]
              dimensions: [status, customers.city]
              time_dimension: created_at
              granularity: day
              partition_granularity: month
              refresh_key:
                every: 1 hour
          hierarchies:
            - name: place
              levels: [status]
          access_policy:
            - group: analysts
              row_level:
                filters:
                  - member: status
                    operator: notEquals
                    values: [deleted]
    `);
    const result = validateModel(
      [file('model/cubes/orders.yml', orders), customersFile(), file('model/views/sales.yml', views), file('README.md', '# not a model')].filter((f) =>
        isModelFile(f.path),
      ),
    );
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.cubesCount).toBe(2);
    const artifact = result.artifact!;
    expect(artifact.cubes.map((c) => c.name)).toEqual(['customers', 'orders']);
    const ordersCube = artifact.cubes[1]!;
    expect(ordersCube.dimensions[0]).toEqual({ name: 'id', type: 'number', sql: 'id', primary_key: true, public: false });
    expect(ordersCube.measures[0]).toEqual({ name: 'count', type: 'count', sql: null, public: true });
    expect(ordersCube.pre_aggregations[0]).toMatchObject({
      name: 'by_status',
      type: 'rollup',
      measures: ['orders.count', 'orders.total'],
      dimensions: ['orders.status', 'customers.city'],
      time_dimension: 'orders.created_at',
      granularity: 'day',
    });
    expect(ordersCube.hierarchies).toEqual([{ name: 'place', levels: ['orders.status'] }]);
    expect(artifact.views).toHaveLength(1);
    expect(artifact.views[0]!.members.map((m) => [m.name, m.member, m.type])).toEqual([
      ['status', 'orders.status', 'string'],
      ['revenue', 'orders.total', 'sum'],
      ['count', 'orders.count', 'count'],
      ['completed', 'orders.completed', null],
      ['customers_name', 'customers.name', 'string'],
      ['customers_city', 'customers.city', 'string'],
      ['customers_count', 'customers.count', 'count'],
      ['revenue_per_order', null, 'number'],
    ]);
    expect(artifact.views[0]!.members[1]).toMatchObject({ title: 'Revenue', join_path: 'orders', kind: 'measure' });
    expect(JSON.parse(JSON.stringify(artifact))).toEqual(artifact);
  });

  it('knows which files of a repository are model files', () => {
    for (const path of ['model/cubes/orders.yml', 'model/views/sales.yaml', 'schema/Orders.js', 'orders.yml', 'model/cubes/ORDERS.YML'])
      expect(isModelFile(path), path).toBe(true);
    for (const path of [
      'README.md',
      'model/README.md',
      '.github/workflows/ci.yml',
      'node_modules/x/index.js',
      'cube.js',
      'model/data.json',
      'model/.hidden.yml',
    ])
      expect(isModelFile(path), path).toBe(false);
  });

  it('the starter model validates, and every name in it starts with starter_', () => {
    expect(STARTER_MODEL_PATH).toBe('model/cubes/starter.yml');
    expect(isModelFile(STARTER_MODEL_PATH)).toBe(true);
    const result = validateModel([file(STARTER_MODEL_PATH, STARTER_MODEL)]);
    expect(result.errors).toEqual([]);
    expect(result.cubesCount).toBe(1);
    const names = [...result.artifact!.cubes, ...result.artifact!.views].map((entity) => entity.name);
    expect(names).toEqual(['starter_orders', 'starter_orders_view']);
    for (const name of names) expect(name.startsWith('starter_')).toBe(true);
    const measures = result.artifact!.cubes[0]!.measures.map((m) => m.type);
    expect(measures).toEqual(expect.arrayContaining(['count', 'sum']));
    expect(result.artifact!.cubes[0]!.dimensions.some((d) => d.primary_key)).toBe(true);
    expect(result.artifact!.views[0]!.members.every((m) => m.member?.startsWith('starter_orders.'))).toBe(true);
  });
});
