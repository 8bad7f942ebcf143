import { describe, expect, it } from 'vitest';
import { titled } from '../src/semantic-layer/query/members.js';

/*
 * Titles as Cube's schema compiler makes them from a name (CubeToMetaTransformer.titleize: the
 * `camelcase` package's PascalCase, then `inflection.underscore` and `inflection.titleize`, then
 * `Id` as `ID`). The expected titles are what that pipeline answers (camelcase 6.3, inflection
 * 1.13, as Cube Core 1.7 installs them); conformance:cube compares every title of its model too.
 */

const CUBE_TITLES: Array<[string, string]> = [
  ['rolling_count_7d', 'Rolling Count7 D'],
  ['created_at', 'Created at'],
  ['customer_id', 'Customer ID'],
  ['id', 'ID'],
  ['order_ids', 'Order IDs'],
  ['userId', 'User ID'],
  ['customerID', 'Customer ID'],
  ['HTMLParser', 'Html Parser'],
  ['amount_per_order', 'Amount Per Order'],
  ['top_10_products', 'Top10 Products'],
  ['p95_latency', 'P95 Latency'],
  ['v2', 'V2'],
  ['in_stock', 'In Stock'],
  ['of_the_month', 'Of the Month'],
  ['customer_orders', 'Customer Orders'],
  ['lead-time', 'Lead Time'],
  ['x.y', 'X Y'],
  ['ÄpfelÜber', 'Äpfelüber'],
  ['__private', 'Private'],
  ['fiscal_year', 'Fiscal Year'],
];

describe('titles from names', () => {
  it('are Cube’s: words at underscores and case changes, digits glued to the word before, a letter after digits its own word, small words lower case but first, ID', () => {
    for (const [name, title] of CUBE_TITLES) expect([name, titled(name)]).toEqual([name, title]);
  });
});
