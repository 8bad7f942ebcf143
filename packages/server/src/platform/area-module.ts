import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CredentialCheckers } from '../http/auth.js';
import type { ProblemDialect } from '../http/problem-dialect.js';
import type { Tenant } from '../http/tenant.js';
import type { Platform } from './platform.js';

/**
 * What an area's routes may take from the app beyond the area's own services: the request's
 * tenant and caller plumbing, and where absolute URLs point.
 */
export interface RouteContext {
  resolveTenant(request: FastifyRequest): Promise<Tenant>;
  /** For routes that need no credential (OAuth callbacks): the user a credential they do carry names, else null; an invalid one is refused. */
  identifyOptional(request: FastifyRequest, tenant: Tenant): Promise<number | null>;
  /** The origin of absolute URLs in single-tenant mode (PUBLIC_URL, else this server on its bound port). */
  publicUrl(): URL;
  /** Tenants' parent domain (BASE_DOMAIN); null: one tenant. */
  baseDomain: string | null;
}

/**
 * One area, built: what it offers the app. Everything but `services` is optional. Its periodic
 * work is registered with the platform's jobs service as it is built (`jobs.schedule`), and runs
 * while this process's jobs worker runs.
 */
export interface Area<S extends object = object> {
  /** What the area's routes, other areas (through `use`) and tests call. */
  readonly services: S;
  /** Its JSON schemas, added to the app by `$id` (and published in the OpenAPI document). */
  readonly schemas?: readonly TSchema[];
  /** Its routes, registered once the app's hooks are in place. */
  readonly routes?: (context: RouteContext) => ReadonlyArray<FastifyPluginAsyncTypebox | FastifyPluginAsync>;
  /** How its routes' problems are written where they differ from RFC 9457 (SCIM, the data API). */
  readonly problemDialects?: readonly ProblemDialect[];
  /** The credentials it issues, for the app's credential check (http/auth.ts). */
  readonly credentials?: Partial<CredentialCheckers>;
  /** As the app starts closing, before requests in flight are waited for (work that would hold them). */
  readonly preClose?: () => void | Promise<void>;
  /** As the app closes, after its requests. */
  readonly close?: () => void | Promise<void>;
}

/** Builds another area (once, the first time it is asked for) and gives its services. */
export type Use = <T extends object>(module: AreaModule<T, never>) => T;

/** What an area is built from: the platform and the other areas it uses. */
export interface AreaContext {
  readonly platform: Platform;
  readonly use: Use;
}

/**
 * An area as the composition root lists it: its name and how it is built, from the platform,
 * the other areas it uses and its own configuration (`C`, given where it is listed). The root
 * lists each area once (services.ts); an area that needs another's services asks with `use`, in
 * the direction its imports already go (`npm run cycles`), and the root wires the few that go
 * the other way through the area's configuration.
 */
export interface AreaModule<S extends object = object, C = undefined> {
  readonly name: string;
  build(context: AreaContext, config: C): Area<S>;
}

/** An area listed with its configuration, or with how to make it from areas listed elsewhere (built first). */
export interface Configured<S extends object, C> {
  readonly module: AreaModule<S, C>;
  readonly config: (use: Use) => C;
}

/** An entry of the composition root's list: an area that needs no configuration, or one given its own. */
export type Listed = AreaModule<object, undefined> | Configured<object, any>;

export function defineArea<S extends object, C = undefined>(name: string, build: (context: AreaContext, config: C) => Area<S>): AreaModule<S, C> {
  return { name, build };
}

export function configure<S extends object, C>(module: AreaModule<S, C>, config: C): Configured<S, C> {
  return { module, config: () => config };
}

/**
 * An area whose configuration takes services of areas that depend on it (the way its imports
 * cannot go): `wire(reportsArea, (use) => ({ queries: use(dataApiArea).dataApi }))`. Those areas
 * are built first, so they must not need this one while being built.
 */
export function wire<S extends object, C>(module: AreaModule<S, C>, config: (use: Use) => C): Configured<S, C> {
  return { module, config };
}
