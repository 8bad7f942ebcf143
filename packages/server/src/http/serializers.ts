import type { FastifyInstance } from 'fastify';
import build, { type Schema } from 'fast-json-stringify';

type Serializer = (data: unknown) => string;

/**
 * Fastify builds a serializer for every status of every route, and fast-json-stringify checks
 * every shared schema against the JSON Schema meta-schema again for each one it builds: about 2 s
 * of CPU at every start, most of it spent on the same few responses (the problem details of each
 * error status) hundreds of times over. Here each distinct response schema is built once, by the
 * same builder with the same shared schemas, so every route answers with the very bytes it did.
 * What was built is kept for the process's life per set of shared schemas: every app of a process
 * (a test worker builds many) has the same ones, and a serializer holds no state of its app.
 * Returns the app's builder, for routes that compile some statuses themselves.
 */
export function installSerializers(app: FastifyInstance): (schema: unknown) => Serializer {
  let built: Map<string, Serializer> | undefined;
  let shared: Record<string, Schema> | undefined;
  const serializerFor = (schema: unknown): Serializer => {
    if (!built) {
      // Read when the first route is compiled: every shared schema is added by then.
      shared = app.getSchemas() as Record<string, Schema>;
      const sharedKey = sharedSchemasKey(app);
      built = builtByShared.get(sharedKey) ?? new Map<string, Serializer>();
      builtByShared.set(sharedKey, built);
    }
    const key = JSON.stringify(schema);
    let serializer = built.get(key);
    if (!serializer) {
      serializer = build(schema as Schema, { schema: shared }) as Serializer;
      built.set(key, serializer);
    }
    return serializer;
  };
  // Built on a response's first use, not at start: a process answers a few of its hundreds of
  // routes' statuses, and building them all took much of a start's seconds.
  app.setSerializerCompiler(({ schema }) => {
    let serializer: Serializer | undefined;
    return (data: unknown) => (serializer ??= serializerFor(schema))(data);
  });
  return serializerFor;
}

/** Serializers by the shared schemas' text, then by the response schema's text. */
const builtByShared = new Map<string, Map<string, Serializer>>();

const sharedKeys = new WeakMap<FastifyInstance, string>();

/**
 * The text of the app's shared schemas, made once per app: what is compiled against them is kept
 * under it (here and in page-serializer.ts). Read once every shared schema is added.
 */
export function sharedSchemasKey(app: FastifyInstance): string {
  let key = sharedKeys.get(app);
  if (key === undefined) {
    key = JSON.stringify(app.getSchemas());
    sharedKeys.set(app, key);
  }
  return key;
}
