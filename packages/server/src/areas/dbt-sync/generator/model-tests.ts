import type { Manifest, ManifestNode } from './manifest.js';

/** What a model's dbt tests say about its columns: which are unique, which not null, which point at another model. */
export interface ModelFacts {
  unique: string[];
  notNull: Set<string>;
  /** `column` of this model references `field` of model `parentId`, in test order. */
  relationships: Array<{ column: string; parentId: string; field: string }>;
}

const GENERIC = new Set(['unique', 'not_null', 'relationships']);

function emptyFacts(): ModelFacts {
  return { unique: [], notNull: new Set(), relationships: [] };
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** A test's column: `column_name` on the node (dbt 1.x), else the `column_name` argument. */
function testColumn(test: ManifestNode): string | null {
  return text(test.column_name) ?? text(test.test_metadata?.kwargs?.column_name);
}

/** The model a test is attached to: `attached_node` (v10+), else the one model it depends on. */
function testedModel(test: ManifestNode, models: ReadonlySet<string>): string | null {
  if (test.attached_node) return test.attached_node;
  const deps = (test.depends_on?.nodes ?? []).filter((id) => models.has(id));
  return deps.length === 1 ? (deps[0] ?? null) : null;
}

/**
 * The facts of dbt's generic tests `unique`, `not_null` and `relationships` (the built-in ones,
 * not a package's namesakes), per model id. Tests are read in `unique_id` order, so the facts
 * (and what is generated from them) do not depend on the order of the manifest's keys.
 */
export function modelFacts(manifest: Manifest, models: ReadonlySet<string>): Map<string, ModelFacts> {
  const facts = new Map<string, ModelFacts>();
  const tests = Object.values(manifest.nodes)
    .filter((n) => n.resource_type === 'test' && n.test_metadata && GENERIC.has(n.test_metadata.name) && (n.test_metadata.namespace ?? 'dbt') === 'dbt')
    .sort((a, b) => (a.unique_id < b.unique_id ? -1 : a.unique_id > b.unique_id ? 1 : 0));
  for (const test of tests) {
    const modelId = testedModel(test, models);
    const column = testColumn(test);
    if (modelId === null || column === null || !models.has(modelId)) continue;
    let entry = facts.get(modelId);
    if (!entry) facts.set(modelId, (entry = emptyFacts()));
    const name = test.test_metadata?.name;
    if (name === 'unique') entry.unique.push(column);
    else if (name === 'not_null') entry.notNull.add(column.toLowerCase());
    else {
      const field = text(test.test_metadata?.kwargs?.field);
      const parentId = (test.depends_on?.nodes ?? []).find((id) => id !== modelId && models.has(id));
      // A reference to a source, or a model of the model itself, makes no join between cubes.
      if (field !== null && parentId !== undefined) entry.relationships.push({ column, parentId, field });
    }
  }
  return facts;
}
