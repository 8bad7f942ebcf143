import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';

interface LogLine {
  level: number;
  reqId?: string;
  msg: string;
  method?: string;
  url?: string;
  statusCode?: number;
  responseTime?: number;
}

/** At info, each request writes one line once answered: what an operator greps for, with the request id. */
describe.each(DIALECTS)('the access log (%s)', (dialect) => {
  let t: TestApp;
  const lines: LogLine[] = [];
  beforeAll(async () => {
    t = await TestApp.create(dialect, { logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } } });
  });
  afterAll(async () => t?.close());

  it('writes one line per request with its id, method, URL, status and time, for answers and refusals alike', async () => {
    lines.length = 0;
    const ok = await t.request({ url: '/api/v1/users/me' });
    const refused = await t.request({ url: '/api/v1/users/me', key: null });
    for (const [res, status] of [
      [ok, 200],
      [refused, 401],
    ] as const) {
      expect(res.statusCode).toBe(status);
      const own = lines.filter((l) => l.reqId === res.headers['x-request-id']);
      expect(own, JSON.stringify(lines)).toHaveLength(1);
      expect(own[0]).toMatchObject({ level: 30, msg: 'request completed', method: 'GET', url: '/api/v1/users/me', statusCode: status });
      expect(own[0]!.responseTime).toBeGreaterThanOrEqual(0);
    }
  });
});
