/** A query the data API refuses: 400 with a message naming what is wrong (403 for members a policy hides). */
export class QueryError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 = 400,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}
