import type { TSchema } from 'typebox';

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const groupSchemas: TSchema[] = [];
