import type { Built } from './build.js';
import type { Finding, FindingKind } from './checks.js';

/**
 * Counts and findings over a whole run, in bounded memory: counters per operation and status, and
 * per (operation, kind, detail) one reproduction, the shortest seen.
 */

interface Reproduction {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  bodyLength: number;
  status: number;
  response: string;
  mutation: string | undefined;
  logged: string | undefined;
  index: number;
  credential: string;
}

interface Entry {
  op: string;
  finding: Finding;
  count: number;
  repro: Reproduction;
  size: number;
}

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text);
/** Control characters and surrogates written as escapes, so a reproduction can be pasted. */
const visible = (text: string) =>
  [...text]
    .map((c) => {
      const code = c.charCodeAt(0);
      return code < 0x20 || (c.length === 1 && code >= 0xd800 && code <= 0xdfff) ? `\\u${code.toString(16).padStart(4, '0')}` : c;
    })
    .join('');

export class Report {
  readonly perOperation = new Map<string, Map<number, number>>();
  readonly statuses = new Map<number, number>();
  private millis = new Map<string, number>();
  private findings = new Map<string, Entry>();
  requests = 0;

  count(op: string, status: number, ms = 0): void {
    this.requests++;
    this.millis.set(op, (this.millis.get(op) ?? 0) + ms);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    const byStatus = this.perOperation.get(op) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.perOperation.set(op, byStatus);
  }

  add(op: string, finding: Finding, built: Built, credential: string, status: number, response: string, logged: string | undefined, index: number): boolean {
    const key = `${op}|${finding.kind}|${finding.detail}`;
    const size = built.url.length + (built.payload?.length ?? 0);
    const existing = this.findings.get(key);
    const repro = (): Reproduction => ({
      method: built.method,
      url: clip(built.url, 300),
      headers: Object.fromEntries(
        Object.entries(built.headers).map(([k, v]) => [k, k === 'authorization' ? v.replace(/mapi_[A-Za-z0-9]{36}/, (m) => `${m.slice(0, 9)}…`) : v]),
      ),
      body: built.payload === undefined ? undefined : clip(built.payload, 400),
      bodyLength: built.payload?.length ?? 0,
      status,
      response: clip(response, 300),
      mutation: built.body?.mutation,
      logged,
      index,
      credential,
    });
    if (!existing) {
      this.findings.set(key, { op, finding, count: 1, repro: repro(), size });
      return true;
    }
    existing.count++;
    if (size < existing.size) Object.assign(existing, { repro: repro(), size, finding });
    return false;
  }

  total(kind: FindingKind): number {
    let n = 0;
    for (const e of this.findings.values()) if (e.finding.kind === kind) n += e.count;
    return n;
  }

  get distinct(): number {
    return this.findings.size;
  }

  print(out: (line: string) => void, seed: number): void {
    out('');
    out('Requests per operation (total, mean ms, status:count):');
    const ops = [...this.perOperation.entries()].sort(([a], [b]) => a.localeCompare(b));
    for (const [op, byStatus] of ops) {
      const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
      const list = [...byStatus.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}:${n}`)
        .join(' ');
      const mean = (this.millis.get(op) ?? 0) / total;
      out(`  ${op.padEnd(34)} ${String(total).padStart(6)} ${mean.toFixed(1).padStart(7)}  ${list}`);
    }
    out('');
    out(
      `Statuses: ${[...this.statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')}`,
    );
    const fivexx = [...this.statuses.entries()].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    out(`5xx responses: ${fivexx}`);
    const undocumented = [...this.findings.values()].filter((e) => e.finding.kind === 'undocumented-status');
    out(
      `Undocumented statuses: ${undocumented.reduce((a, e) => a + e.count, 0)}${undocumented.length ? ` (${undocumented.map((e) => `${e.op} ${e.finding.detail}: ${e.count}`).join('; ')})` : ''}`,
    );
    out(
      `Invalid bodies accepted: ${this.total('invalid-body-accepted')}; hostile bodies accepted: ${this.total('hostile-body-accepted')}; unreadable bodies accepted: ${this.total('unreadable-body-accepted')}`,
    );
    out(`Invalid parameters accepted: ${this.total('invalid-param-accepted')}; foreign ids accepted: ${this.total('foreign-id-accepted')}`);
    out(
      `Response-schema mismatches: ${this.total('response-schema')}; error-shape mismatches: ${this.total('error-shape')}; undocumented codes: ${this.total('undocumented-code')}; content types: ${this.total('content-type')}`,
    );
    out(`Unauthenticated accepted: ${this.total('unauthenticated-accepted')}; scope bypasses: ${this.total('scope-bypass')}`);
    out(
      `Data API: hostile values in SQL text: ${this.total('hostile-in-sql')}; answers past a limit: ${this.total('limit-exceeded')}; data sources changed: ${this.total('source-changed')}; statements the source refused: ${this.total('source-refused')}`,
    );
    out('');
    if (this.findings.size === 0) {
      out(`No findings (seed ${seed}).`);
      return;
    }
    out(`${this.findings.size} distinct findings (seed ${seed}):`);
    const entries = [...this.findings.values()].sort((a, b) => a.finding.kind.localeCompare(b.finding.kind) || a.op.localeCompare(b.op));
    for (const e of entries) {
      const r = e.repro;
      out('');
      out(`[${e.finding.kind}] ${e.op}: ${e.finding.detail} (${e.count}×)`);
      out(`  ${visible(e.finding.message)}`);
      out(`  request #${r.index} as ${r.credential}: ${r.method} ${visible(r.url)}`);
      const headers = Object.entries(r.headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ');
      if (headers) out(`  headers: ${visible(headers)}`);
      if (r.body !== undefined) out(`  body (${r.bodyLength} chars): ${visible(r.body)}`);
      if (r.mutation) out(`  made by: ${visible(r.mutation)}`);
      out(`  answer ${r.status}: ${visible(r.response)}`);
      if (r.logged) out(`  server log: ${visible(r.logged)}`);
    }
  }
}
