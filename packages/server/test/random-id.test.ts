import { describe, expect, it } from 'vitest';
import { newPublicId } from '../src/areas/dashboards/dashboards.service.js';
import { randomId } from '../src/shared/random-id.js';

/*
 * Ids a user types as command-line arguments (a dashboard's public id, an export's job id) never
 * start with a dash, which a command line reads as an option: one random base64url id in 64 would.
 */
describe('random ids', () => {
  it('are base64url of the bytes asked for and never start with "-" (10,000 drawn: about 156 would)', () => {
    const ids = Array.from({ length: 10_000 }, () => randomId(16));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newPublicId()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });
});
