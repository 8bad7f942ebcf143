import type { Area, AreaModule, Configured, Listed, Use } from './area-module.js';
import type { Platform } from './platform.js';

type ServicesOf<E> = E extends Configured<infer S, unknown> ? S : E extends AreaModule<infer S, never> ? S : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** Every listed area's services as one object (what `app.services` holds besides the platform). */
export type AreaServices<L extends readonly Listed[]> = Intersection<ServicesOf<L[number]>>;

type AnyModule = AreaModule<object, unknown>;

/**
 * The areas of one app, built in the order they are listed, each once: an area asking for
 * another (`use`) builds it first. An area asked for that is not listed, or two areas each
 * needing the other while being built, stop the app at start.
 */
export class Areas<L extends readonly Listed[]> {
  readonly #platform: Platform;
  readonly #config = new Map<AnyModule, ((use: Use) => unknown) | undefined>();
  readonly #built = new Map<AnyModule, Area>();
  readonly #building: AnyModule[] = [];

  constructor(platform: Platform, listed: L) {
    this.#platform = platform;
    for (const entry of listed) {
      const [module, config] = 'module' in entry ? [entry.module as AnyModule, entry.config] : [entry as AnyModule, undefined];
      if (this.#config.has(module)) throw new Error(`The area ${module.name} is listed twice.`);
      this.#config.set(module, config);
    }
    for (const module of this.#config.keys()) this.#build(module);
  }

  /** The built areas, in the order they are listed. */
  get all(): Area[] {
    return [...this.#config.keys()].map((module) => this.#built.get(module)!);
  }

  /** Every area's services in one object; a name offered by two areas stops the app. */
  services(): AreaServices<L> {
    const out: Record<string, unknown> = {};
    for (const module of this.#config.keys()) {
      for (const [name, service] of Object.entries(this.#built.get(module)!.services)) {
        if (name in out) throw new Error(`Two areas offer a service named ${name} (the second is ${module.name}).`);
        out[name] = service;
      }
    }
    return out as AreaServices<L>;
  }

  readonly use = <T extends object>(module: AreaModule<T, never>): T => this.#build(module as AnyModule).services as T;

  #build(module: AnyModule): Area {
    const known = this.#built.get(module);
    if (known) return known;
    if (!this.#config.has(module)) throw new Error(`The area ${module.name} is used but not listed in the composition root.`);
    if (this.#building.includes(module)) {
      throw new Error(`Areas need each other while being built: ${[...this.#building, module].map((m) => m.name).join(' → ')}.`);
    }
    this.#building.push(module);
    try {
      const area = module.build({ platform: this.#platform, use: this.use }, this.#config.get(module)?.(this.use));
      this.#built.set(module, area);
      return area;
    } finally {
      this.#building.pop();
    }
  }
}
