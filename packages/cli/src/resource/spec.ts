/**
 * What the generated commands know of an operation, as scripts/generate-operations.ts reads it from
 * the OpenAPI document into src/generated/operations.ts.
 */
export interface ParameterSpec {
  name: string;
  /** integer, number, boolean, string or array (of strings). */
  type: string;
  /** Allowed values, listed in the option's help. */
  enum?: readonly string[];
  required?: boolean;
  description?: string;
}

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  tag: string;
  summary: string;
  /** In the order the path names them: the command's positional arguments. */
  pathParams: readonly ParameterSpec[];
  query: readonly ParameterSpec[];
  /** A JSON body: none, optional, required; `unsupported` for other media types (multipart uploads). */
  body: 'none' | 'optional' | 'required' | 'unsupported';
  /** The top-level fields of an object body, listed in the command's help. */
  bodyFields?: readonly { name: string; type: string; required?: boolean }[];
  /** The success answer: JSON, bytes (a download), or nothing (204). */
  response: 'json' | 'binary' | 'empty';
  /** Called without a credential (discovery documents, health). */
  public?: true;
}
