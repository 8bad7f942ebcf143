import { IDENTIFIER } from '../../../model/model-schema.js';

const identifier = new RegExp(IDENTIFIER);

/**
 * snake_case a dbt name into an identifier the model language accepts: `OrderItems` →
 * `order_items`, `stg-orders v2` → `stg_orders_v2`; one starting with a digit gets `fallback_`
 * in front (`2024_sales` → `model_2024_sales`), an empty one is `fallback`.
 */
export function snakeCase(name: string, fallback: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (words === '') return fallback;
  return identifier.test(words) ? words : `${fallback}_${words}`;
}

/**
 * Hands out unique names in the order asked: the first to want a name gets it, later ones get
 * `_2`, `_3`, … (skipping any taken), so the same inputs in the same order always give the same names.
 */
export class Namer {
  readonly #taken = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.#taken.add(name);
  }

  take(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.#taken.has(name); n += 1) name = `${wanted}_${n}`;
    this.#taken.add(name);
    return name;
  }
}
