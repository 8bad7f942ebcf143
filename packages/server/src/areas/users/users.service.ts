import type { Store } from '../../db/database.js';

export function usersService(store: Store) {
  void store;
  return {};
}
export type UsersService = ReturnType<typeof usersService>;
