import { Type, type Static } from 'typebox';

export const ModelErrorSchema = Type.Object(
  {
    message: Type.String(),
    fileName: Type.Union([Type.String(), Type.Null()], { description: 'The model file the error is in; null when it is about no one file.' }),
    line: Type.Optional(Type.Integer({ minimum: 1, description: '1-based' })),
    column: Type.Optional(Type.Integer({ minimum: 1, description: '1-based' })),
  },
  { additionalProperties: false },
);
export type ModelError = Static<typeof ModelErrorSchema>;

export interface Position {
  line: number;
  column: number;
}

export function modelError(fileName: string | null, message: string, at?: Position): ModelError {
  return at ? { message, fileName, line: at.line, column: at.column } : { message, fileName };
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** File (errors about no file first), then line, then column, then message: the same model always reads the same. */
export function compareErrors(a: ModelError, b: ModelError): number {
  if (a.fileName !== b.fileName) return a.fileName === null ? -1 : b.fileName === null ? 1 : byText(a.fileName, b.fileName);
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0) || byText(a.message, b.message);
}

/** The same error reached twice (a member checked from two places) is reported once. */
export function sortedUnique(errors: ModelError[]): ModelError[] {
  const seen = new Set<string>();
  return [...errors].sort(compareErrors).filter((error) => {
    const key = `${error.fileName}\u0000${error.line}\u0000${error.column}\u0000${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
