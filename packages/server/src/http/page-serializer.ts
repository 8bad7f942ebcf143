import type { FastifyInstance, FastifySchema } from 'fastify';
import build, { type Schema } from 'fast-json-stringify';
import { sharedSchemasKey } from './serializers.js';

interface ObjectSchema {
  $id?: string;
  properties?: Record<string, unknown>;
  required?: string[];
}

/**
 * Pages that keep the deprecated `data` field (pagination.ts `LegacyPageOf`) carry the same array
 * twice, and the schema serializer wrote it twice: half the time of a listing was spent writing
 * JSON it had already written. These routes get a serializer that writes `items` once and puts
 * the same text in `data`; the schema (and so the output's shape) is unchanged, which the
 * serializer-agnostic response tests check.
 *
 * Other statuses of those routes, and every other route, keep the app's schema serializers
 * (serializers.ts).
 */
export function installPageSerializer(app: FastifyInstance, serializerFor: (schema: unknown) => (data: unknown) => string): void {
  app.addHook('onRoute', (route) => {
    const ref = (route.schema as FastifySchema | undefined)?.response as Record<string, { $ref?: string }> | undefined;
    const pageId = ref?.['200']?.$ref;
    if (!pageId) return;
    const schemas = app.getSchemas() as Record<string, ObjectSchema>;
    const page = schemas[pageId];
    const itemsRef = (page?.properties?.items as { items?: { $ref?: string } } | undefined)?.items?.$ref;
    if (!page?.properties?.data || !itemsRef) return;
    const writePage = (value: { items: unknown[]; data?: unknown } & Record<string, unknown>): string => {
      const { writeItems, writeRest } = pageWriters(app, pageId, page, itemsRef);
      const items = writeItems(value.items);
      const others = writeRest(value);
      // `others` is an object with at least pageInfo: "{...}" never "{}".
      return `{"items":${items},"data":${items},${others.slice(1)}`;
    };
    const fallback = route.serializerCompiler;
    route.serializerCompiler = (context) => {
      if (String(context.httpStatus) === '200') return writePage as (data: unknown) => string;
      if (fallback) return fallback(context);
      return serializerFor(context.schema);
    };
  });
}

type Write = (data: unknown) => string;

/**
 * The two writers of a page, built on the route's first answer rather than at start (most routes
 * of a process are never listed) and kept for the process's life by the shared schemas' text and
 * the page's id: every app of a process (a test worker builds many) has the same ones.
 */
const writersBy = new Map<string, { writeItems: Write; writeRest: Write }>();

function pageWriters(app: FastifyInstance, pageId: string, page: ObjectSchema, itemsRef: string): { writeItems: Write; writeRest: Write } {
  const key = `${pageId}\u0000${sharedSchemasKey(app)}`;
  let writers = writersBy.get(key);
  if (!writers) {
    const schemas = app.getSchemas() as Record<string, ObjectSchema>;
    const externals = Object.fromEntries(Object.entries(schemas).filter(([id]) => id !== pageId)) as Record<string, Schema>;
    const { items: _items, data: _data, ...rest } = page.properties ?? {};
    writers = {
      writeItems: build({ type: 'array', items: { $ref: itemsRef } }, { schema: externals }) as Write,
      writeRest: build(
        { type: 'object', properties: rest as Record<string, Schema>, required: (page.required ?? []).filter((k) => k !== 'items' && k !== 'data') },
        { schema: externals },
      ) as Write,
    };
    writersBy.set(key, writers);
  }
  return writers;
}
