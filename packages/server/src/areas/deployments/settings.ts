/** Deployment settings are a free-form JSON object; these helpers keep them one. */

export type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// defineProperty, not assignment: a key named "__proto__" must stay data, never a prototype.
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7386 JSON merge patch: null removes a key, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = {};
  if (isObject(target)) for (const [key, value] of Object.entries(target)) setOwn(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

/** Spec: "all deployment settings, secrets excluded". Nested objects are searched too. */
const SECRET_KEY = /secret|password|token|private/i;

export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (!isObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!SECRET_KEY.test(key)) setOwn(result, key, withoutSecrets(inner));
  }
  return result;
}

// Merging and filtering recurse: settings are open JSON, which request validation bounds to
// MAX_JSON_DEPTH levels (shared/json-depth.ts) before they get here.

export function parseSettings(text: string): JsonObject {
  const value: unknown = JSON.parse(text);
  return isObject(value) ? value : {};
}
