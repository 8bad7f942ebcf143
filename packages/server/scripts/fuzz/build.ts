import type { Operation, Parameter } from './operations.js';
import { CursorRef, Formed, type BodyPlan, type Plan, type ParamPlan } from './plan.js';
import { poolFor } from './schema-arbitrary.js';
import { PoolRef, serialize, typedPool } from './values.js';
import { tableOfPool, type World } from './world.js';

/** A request ready for app.inject, with what the checks need to know about how it was made. */
export interface Built {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
  /** Parameters whose value breaks their schema (only unambiguous breaks). */
  invalidParams: string[];
  /** Path parameters that name a row of another tenant or another deployment on purpose. */
  foreignParams: string[];
  /** A path value the router refuses before anything else (too long, not UTF-8): a 400 for the URL. */
  routerRefuses: boolean;
  /** The deployment the path names, when it is a plain id. */
  deploymentId: number | undefined;
  body: BodyPlan | undefined;
}

const STRICT_INT = /^(0|-?[1-9][0-9]*)$/;

/** encodeURIComponent, except that a lone surrogate is sent as the WTF-8 bytes a hostile client would send. */
function encodeURIComponentSafe(text: string): string | undefined {
  try {
    return encodeURIComponent(text);
  } catch {
    return undefined;
  }
}

export function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text]
      .map((c) => {
        const code = c.charCodeAt(0);
        if (c.length === 1 && code >= 0xd800 && code <= 0xdfff)
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
        return encodeURIComponent(c);
      })
      .join('');
  }
}
const OVERSIZE = 1024 * 1024 + 1024;

/**
 * Whether a parameter's text is valid for its schema: 'valid', 'invalid', or 'ambiguous' when
 * a lenient reading is defensible (`01` for a page size, `yes` for a boolean).
 */
export function paramValidity(
  p: Parameter,
  text: string | undefined,
  validateString: (schema: unknown, value: string) => boolean,
): 'valid' | 'invalid' | 'ambiguous' {
  if (text === undefined) return p.required ? 'invalid' : 'valid';
  const s = p.schema as Record<string, any>;
  if (typeof s !== 'object') return 'valid';
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  if (type === 'integer') {
    const isId = p.in === 'path' || poolFor(p.name) !== undefined;
    if (!STRICT_INT.test(text)) return isId ? 'invalid' : /^[+-]?\s*\d/.test(text) || text === '' ? 'ambiguous' : 'invalid';
    const n = Number(text);
    if (!Number.isSafeInteger(n)) return isId ? 'invalid' : 'ambiguous';
    if ((s.minimum !== undefined && n < s.minimum) || (s.maximum !== undefined && n > s.maximum)) return 'invalid';
    return 'valid';
  }
  if (type === 'boolean') return text === 'true' || text === 'false' ? 'valid' : 'ambiguous';
  if (type === 'number') return Number.isFinite(Number(text)) && text.trim() !== '' ? 'valid' : 'ambiguous';
  return validateString(s, text) ? 'valid' : 'invalid';
}

export class Builder {
  /** Cursors seen per operation, a few each. */
  private cursors = new Map<string, string[]>();

  constructor(
    private readonly world: World,
    private readonly validateString: (schema: unknown, value: string) => boolean,
  ) {}

  rememberCursor(op: Operation, cursor: unknown): void {
    if (typeof cursor !== 'string' || cursor.length === 0) return;
    const list = this.cursors.get(op.id) ?? [];
    list.push(cursor);
    if (list.length > 8) list.shift();
    this.cursors.set(op.id, list);
  }

  private text(op: Operation, value: ParamPlan, deploymentId: number | undefined): string {
    if (typeof value === 'string') return value;
    if (value instanceof PoolRef) return String(this.world.resolve(value, deploymentId));
    if (value instanceof Formed) return value.template.replaceAll('{}', String(this.world.resolve(value.ref, deploymentId)));
    if (value instanceof CursorRef) {
      const list = this.cursors.get(op.id);
      return list?.length ? list[value.pick % list.length]! : 'bm90LWEtY3Vyc29y';
    }
    return String(value);
  }

  build(op: Operation, plan: Plan): Built {
    const invalidParams: string[] = [];
    let routerRefuses = false;
    const foreignParams: string[] = [];
    // The deployment first: rows of the other pools are picked inside it.
    const index = op.pathParams.findIndex((p) => p.name === 'deploymentId');
    const deploymentText = index >= 0 ? this.text(op, plan.path[index]!, undefined) : undefined;
    const deploymentId = deploymentText !== undefined && STRICT_INT.test(deploymentText) ? Number(deploymentText) : undefined;
    let url = op.path;
    const typeIndex = op.pathParams.findIndex((p) => p.name === 'itemType');
    const itemPool = typeIndex >= 0 && typeof plan.path[typeIndex] === 'string' ? typedPool(plan.path[typeIndex]) : undefined;
    op.pathParams.forEach((p, i) => {
      let planned = plan.path[i]!;
      if (p.name === 'itemId' && itemPool && planned instanceof PoolRef) planned = new PoolRef(itemPool, planned.pick, planned.reach);
      const text = i === index ? deploymentText! : this.text(op, planned, deploymentId);
      if (paramValidity(p, text, this.validateString) === 'invalid') invalidParams.push(p.name);
      if (text.length > 100 || encode(text) !== encodeURIComponentSafe(text)) routerRefuses = true;
      if (planned instanceof PoolRef && this.isForeign(planned, Number(text), deploymentId)) foreignParams.push(p.name);
      url = url.replace(`{${p.name}}`, encode(text));
    });
    const seen = new Map<string, number>();
    const pairs = plan.query.map(([name, value]) => {
      seen.set(name, (seen.get(name) ?? 0) + 1);
      return [name, this.text(op, value, deploymentId)] as const;
    });
    for (const p of op.queryParams) {
      if ((seen.get(p.name) ?? 0) > 1) continue;
      const sent = pairs.find(([n]) => n === p.name)?.[1];
      if (paramValidity(p, sent, this.validateString) === 'invalid') invalidParams.push(p.name);
    }
    if (pairs.length) url += `?${pairs.map(([n, v]) => `${encode(n)}=${encode(v)}`).join('&')}`;

    const credential = this.world.credentials.get(plan.credential)!;
    const headers: Record<string, string> = {};
    if (credential.key !== null) headers.authorization = `${plan.scheme} ${credential.key}`;
    if (credential.host) headers.host = credential.host;
    let payload: string | undefined;
    if (plan.body) {
      const json = () => serialize(plan.body!.value, (ref) => this.world.resolve(ref, deploymentId));
      switch (plan.body.mode) {
        case 'json':
          headers['content-type'] = 'application/json';
          payload = json();
          break;
        case 'scim+json':
          headers['content-type'] = 'application/scim+json';
          payload = json();
          break;
        case 'text/plain':
          headers['content-type'] = 'text/plain';
          payload = json();
          break;
        case 'form':
          headers['content-type'] = 'application/x-www-form-urlencoded';
          payload = 'name=x&folderId=1';
          break;
        case 'no-type-empty':
          payload = undefined;
          break;
        case 'json-empty':
          headers['content-type'] = 'application/json';
          payload = '';
          break;
        case 'malformed':
          headers['content-type'] = op.scim ? 'application/scim+json' : 'application/json';
          payload = json().slice(0, -1) || '{';
          if (payload === '{}'.slice(0, -1)) payload = '{"a":';
          break;
        case 'bad-charset':
          headers['content-type'] = 'application/json; charset=latin1';
          payload = json();
          break;
        case 'oversize':
          headers['content-type'] = 'application/json';
          payload = JSON.stringify({ name: 'x'.repeat(OVERSIZE) });
          break;
      }
    }
    return { method: op.method, url, headers, payload, invalidParams, foreignParams, routerRefuses, deploymentId, body: plan.body };
  }

  /** A reference that was meant to miss this tenant or deployment, and does name such a row. */
  private isForeign(ref: PoolRef, id: number, deploymentId: number | undefined): boolean {
    const table = tableOfPool(ref.pool);
    if (!table) return false;
    if (ref.reach === 'otherTenant') return !this.world.isOwn(table, id);
    if (ref.reach === 'otherDeployment' && deploymentId !== undefined && this.world.isOwn('deployments', deploymentId)) {
      const home = this.world.deploymentOf(table, id);
      return home !== undefined && home !== deploymentId;
    }
    return false;
  }
}
