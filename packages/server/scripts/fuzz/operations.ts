import type { Schema } from './schema-arbitrary.js';

/** One operation of the served OpenAPI document, with what the fuzzer needs of it. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body?: { required: boolean; content: Map<string, Schema> };
  /** Documented statuses → content type → schema (an empty map: no body). */
  responses: Map<string, Map<string, Schema>>;
  /** No credential needed (`security: []`). */
  public: boolean;
  scim: boolean;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

export function operationsOf(document: any, resolve: (s: Schema) => Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    const shared: any[] = item.parameters ?? [];
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const params = [...shared, ...(raw.parameters ?? [])].map((p) => resolve(p) as any);
      const parameter = (p: any): Parameter => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: p.schema ?? {} });
      const requestBody = raw.requestBody ? (resolve(raw.requestBody) as any) : undefined;
      const responses = new Map<string, Map<string, Schema>>();
      for (const [status, response] of Object.entries<any>(raw.responses ?? {})) {
        const r = resolve(response) as any;
        responses.set(status, new Map(Object.entries<any>(r.content ?? {}).map(([type, media]) => [type, media.schema ?? {}])));
      }
      out.push({
        id: raw.operationId ?? `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map(parameter),
        queryParams: params.filter((p) => p.in === 'query').map(parameter),
        ...(requestBody
          ? {
              body: {
                required: requestBody.required === true,
                content: new Map(Object.entries<any>(requestBody.content ?? {}).map(([type, media]) => [type, media.schema ?? {}])),
              },
            }
          : {}),
        responses,
        public: Array.isArray(raw.security) && raw.security.length === 0,
        scim: path.startsWith('/api/scim/'),
      });
    }
  }
  return out;
}
