import type { Store } from '../../db/database.js';

export function policiesService(store: Store) {
  void store;
  return {};
}
export type PoliciesService = ReturnType<typeof policiesService>;
