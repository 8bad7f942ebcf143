import fc from 'fast-check';
import { mutationArb, HOSTILE_STRINGS } from './mutations.js';
import type { Operation, Parameter } from './operations.js';
import { arbitraryFor, poolFor, poolRefArb, type GenContext, type Schema } from './schema-arbitrary.js';
import { scimBody, scimQuery } from './scim.js';
import { PoolRef } from './values.js';
import type { CredentialName } from './world.js';

/**
 * A request planned from the document: credential, path and query values, body and content type.
 * Ids are pool references until the request is sent, so they name rows that exist then.
 */

/** A real id written in a hostile way (`{}` is the id): `{}.0`, `0{}`, `+{}`. */
export class Formed {
  constructor(
    readonly ref: PoolRef,
    readonly template: string,
  ) {}
}
/** A cursor the server handed out earlier for this operation. */
export class CursorRef {
  constructor(readonly pick: number) {}
}
export type ParamPlan = string | PoolRef | Formed | CursorRef;

export type BodyMode = 'json' | 'scim+json' | 'text/plain' | 'form' | 'no-type-empty' | 'json-empty' | 'malformed' | 'bad-charset' | 'oversize';

export interface BodyPlan {
  mode: BodyMode;
  value: unknown;
  /** What was done to a valid body, or undefined when it is meant to be valid. */
  mutation: string | undefined;
}

export interface Plan {
  credential: CredentialName;
  scheme: 'Bearer' | 'Api-Key' | 'bearer';
  path: ParamPlan[];
  query: Array<[string, ParamPlan]>;
  body: BodyPlan | undefined;
}

const ID_FORMS = ['{}.0', '0{}', '+{}', ' {}', '{} ', '{}e0', '{}.5', '-{}', '{}abc', '00{}', '{}%00', '{}/', '0x{}', '{},{}'];
const HOSTILE_IDS = [
  '1.0',
  '01',
  '+1',
  '-1',
  '0',
  '1e0',
  ' 1',
  '%20 1',
  '9007199254740992',
  '9007199254740991',
  '99999999999999999999999',
  '1.5',
  'NaN',
  'Infinity',
  'null',
  'true',
  'abc',
  '١',
  '１',
  '0x10',
  '-0',
  '1_000',
];

const credentialArb = fc.oneof(
  { weight: 34, arbitrary: fc.constant<CredentialName>('admin') },
  { weight: 12, arbitrary: fc.constant<CredentialName>('developer') },
  { weight: 12, arbitrary: fc.constant<CredentialName>('explorer') },
  { weight: 10, arbitrary: fc.constant<CredentialName>('viewer') },
  { weight: 7, arbitrary: fc.constant<CredentialName>('scopedDeveloper') },
  { weight: 5, arbitrary: fc.constant<CredentialName>('scopedAdmin') },
  { weight: 5, arbitrary: fc.constant<CredentialName>('none') },
  { weight: 5, arbitrary: fc.constant<CredentialName>('badKey') },
  { weight: 3, arbitrary: fc.constant<CredentialName>('otherTenantKey') },
  { weight: 5, arbitrary: fc.constant<CredentialName>('otherTenantHost') },
  { weight: 5, arbitrary: fc.constant<CredentialName>('creatorEmbed') },
);

function isIntegerSchema(schema: Schema): boolean {
  return typeof schema === 'object' && (schema.type === 'integer' || (Array.isArray(schema.type) && schema.type.includes('integer')));
}

function paramPool(op: Operation, p: Parameter) {
  if (op.scim && p.in === 'path' && p.name === 'userId') return 'scimUser' as const;
  if (op.scim && p.in === 'path' && p.name === 'groupId') return 'scimGroup' as const;
  if (op.scim) return undefined;
  const pool = poolFor(p.name);
  if (pool) return pool;
  // Folder listings take `folderId`/`parentId` as a string (`root` or an id).
  return undefined;
}

function validParam(op: Operation, p: Parameter, ctx: GenContext): fc.Arbitrary<ParamPlan> {
  const pool = paramPool(op, p) ?? (p.name === 'folderId' || p.name === 'parentId' ? 'folder' : undefined);
  if (p.name === 'after')
    return fc.oneof({ weight: 3, arbitrary: fc.nat().map((n) => new CursorRef(n)) }, { weight: 1, arbitrary: fc.string({ maxLength: 40 }) });
  const scim = op.scim ? scimQuery(op.path, p.name, p.in) : undefined;
  if (scim) return scim;
  const fromSchema = arbitraryFor(p.schema, ctx, p.name).map((v) => (v instanceof PoolRef ? v : typeof v === 'string' ? v : JSON.stringify(v)));
  if (!pool) return fromSchema;
  const ref = poolRefArb(pool, !isIntegerSchema(p.schema));
  return fc.oneof(
    { weight: 6, arbitrary: ref },
    { weight: 1, arbitrary: fromSchema },
    ...(isIntegerSchema(p.schema) ? [] : [{ weight: 1, arbitrary: fc.constant('root') }]),
  );
}

function hostileParam(op: Operation, p: Parameter): fc.Arbitrary<ParamPlan> {
  const pool = paramPool(op, p) ?? (p.name === 'folderId' || p.name === 'parentId' ? 'folder' : undefined);
  const strings = HOSTILE_STRINGS.filter((s) => p.in === 'query' || s.trim() !== '');
  const options: Array<fc.Arbitrary<ParamPlan>> = [
    fc.constantFrom(...HOSTILE_IDS),
    fc.constantFrom(...strings),
    fc.constantFrom('a'.repeat(300), 'a'.repeat(5000)),
  ];
  if (pool) options.push(fc.tuple(poolRefArb(pool), fc.constantFrom(...ID_FORMS)).map(([ref, t]) => new Formed(ref, t)));
  if (typeof p.schema === 'object' && Array.isArray(p.schema.enum))
    options.push(fc.constantFrom(...(p.schema.enum as unknown[]).flatMap((e) => [String(e).toLowerCase(), ` ${String(e)}`, `${String(e)},${String(e)}`])));
  if (p.in === 'query') options.push(fc.constant(''));
  return fc.oneof(...options);
}

function paramArb(op: Operation, p: Parameter, ctx: GenContext): fc.Arbitrary<ParamPlan> {
  const any = fc.oneof({ weight: 17, arbitrary: validParam(op, p, ctx) }, { weight: 3, arbitrary: hostileParam(op, p) });
  // An empty path segment is another route (`/Groups/` is the list), not a bad value of this one.
  // So are `.` and `..`, which URL parsers (this one and every client's) resolve away.
  return p.in === 'path' ? any.map((v) => (v === '' || v === '.' || v === '..' ? 'x' : v)) : any;
}

function queryArb(op: Operation, ctx: GenContext): fc.Arbitrary<Array<[string, ParamPlan]>> {
  const each = op.queryParams.map((p) =>
    fc
      .tuple(fc.constant(p.name), p.required ? fc.constant(true) : fc.boolean(), paramArb(op, p, ctx))
      .map(([n, include, v]) => (include ? [[n, v] as [string, ParamPlan]] : [])),
  );
  const extras = fc.oneof(
    { weight: 18, arbitrary: fc.constant<Array<[string, ParamPlan]>>([]) },
    { weight: 1, arbitrary: fc.constant<Array<[string, ParamPlan]>>([['unexpectedParam', '1']]) },
    { weight: 1, arbitrary: fc.constant<Array<[string, ParamPlan]>>([['__proto__', 'x']]) },
  );
  const duplicate = fc.nat({ max: 29 });
  return fc.tuple(fc.tuple(...each), extras, duplicate).map(([chosen, more, dup]) => {
    const list = chosen.flat();
    // Now and then a parameter twice (`?first=1&first=2`), which a parser turns into an array.
    if (dup === 0 && list.length > 0) list.push(list[0]!);
    return [...list, ...more];
  });
}

const modeArb = (op: Operation): fc.Arbitrary<BodyMode> => {
  const scim = op.body?.content.has('application/scim+json');
  return fc.oneof(
    { weight: scim ? 35 : 70, arbitrary: fc.constant<BodyMode>('json') },
    { weight: scim ? 35 : 1, arbitrary: fc.constant<BodyMode>('scim+json') },
    { weight: 4, arbitrary: fc.constant<BodyMode>('text/plain') },
    { weight: 2, arbitrary: fc.constant<BodyMode>('form') },
    { weight: 4, arbitrary: fc.constant<BodyMode>('no-type-empty') },
    { weight: 4, arbitrary: fc.constant<BodyMode>('json-empty') },
    { weight: 4, arbitrary: fc.constant<BodyMode>('malformed') },
    { weight: 2, arbitrary: fc.constant<BodyMode>('bad-charset') },
  );
};

/** The schema of the JSON body (the first JSON-like media type). */
export function bodySchema(op: Operation): Schema | undefined {
  if (!op.body) return undefined;
  return op.body.content.get('application/json') ?? op.body.content.get('application/scim+json') ?? [...op.body.content.values()][0];
}

function bodyArb(op: Operation, ctx: GenContext): fc.Arbitrary<BodyPlan | undefined> {
  if (!op.body) return fc.constant(undefined);
  const schema = bodySchema(op) ?? {};
  const valid = (op.scim ? scimBody(op.path, op.method) : undefined) ?? arbitraryFor(schema, ctx);
  const mutated = valid.chain((v) => mutationArb(v, schema, ctx.resolve));
  return fc
    .tuple(
      modeArb(op),
      fc.oneof(
        { weight: 13, arbitrary: valid.map((value) => ({ value, mutation: undefined as string | undefined })) },
        { weight: 7, arbitrary: mutated.map((m) => ({ value: m.value, mutation: m.label as string | undefined })) },
      ),
      fc.nat({ max: 999 }),
    )
    .map(([mode, { value, mutation }, rare]) => ({ mode: rare < 3 ? 'oversize' : mode, value, mutation }));
}

export function planArb(op: Operation, ctx: GenContext): fc.Arbitrary<Plan> {
  return fc.record({
    credential: credentialArb,
    scheme: op.scim
      ? fc.constantFrom<Plan['scheme']>('Bearer', 'Bearer', 'Api-Key', 'bearer')
      : fc.oneof({ weight: 30, arbitrary: fc.constant<Plan['scheme']>('Bearer') }, { weight: 1, arbitrary: fc.constant<Plan['scheme']>('bearer') }),
    path: fc.tuple(...op.pathParams.map((p) => paramArb(op, p, ctx))),
    query: queryArb(op, ctx),
    body: bodyArb(op, ctx),
  });
}
