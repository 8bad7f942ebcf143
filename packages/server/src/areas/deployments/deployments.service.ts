import type { Store } from '../../db/database.js';

export function deploymentsService(store: Store) {
  void store;
  return {};
}
export type DeploymentsService = ReturnType<typeof deploymentsService>;
