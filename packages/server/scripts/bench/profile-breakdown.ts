/**
 * Where the server's time went while it served each target of bench:read, from its V8 CPU profile
 * (`--cpu-prof`, BENCH_PROFILE). Each sample is put in the category of the innermost frame that
 * names one (the database driver, TLS and sockets, serialisation...), so every busy millisecond
 * is counted once. Samples are picked by time: V8 stamps them with the system's monotonic clock,
 * the one `process.hrtime` reads in the benchmark's process, so each target's window of load
 * selects its own samples.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Window {
  label: string;
  /** process.hrtime.bigint() at the start and end of the measured run. */
  from: bigint;
  to: bigint;
  /** Requests the server answered in the window. */
  requests: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Innermost first: the first category whose test a frame passes, walking out from the sample's leaf. */
const CATEGORIES: Array<[string, (frame: ProfileNode['callFrame']) => boolean]> = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  [
    'database driver',
    (f) =>
      /better-sqlite3|kysely\/dist\/esm\/dialect|node_modules\/pg(-protocol|-pool)?\//.test(f.url) ||
      (f.url === '' && /^(all|run|get|iterate|prepare)$/.test(f.functionName)),
  ],
  ['query building', (f) => /node_modules\/kysely\//.test(f.url)],
  [
    'TLS and sockets',
    (f) =>
      /^node:(_tls_wrap|tls|net|internal\/stream_base_commons|internal\/streams)/.test(f.url) ||
      /^(writev|writeUtf8String|writeBuffer|writeLatin1String|onStreamRead|encrypt|decrypt)$/.test(f.functionName),
  ],
  ['HTTP', (f) => /^node:(_http_|internal\/http)/.test(f.url)],
  ['serialisation', (f) => /fast-json-stringify|page-serializer|secure-json-parse/.test(f.url) || f.functionName === 'stringify'],
  ['access log', (f) => /node_modules\/pino|sonic-boom|access-log/.test(f.url)],
  ['Fastify', (f) => /node_modules\/(fastify|@fastify|avvio|find-my-way|light-my-request)\//.test(f.url)],
  ['the API (dist)', (f) => /packages\/server\/dist\//.test(f.url)],
];

export function breakdown(dir: string, pid: number, windows: Window[], log: (line: string) => void): void {
  const file = fs.readdirSync(dir).find((name) => name.endsWith('.cpuprofile') && name.includes(`.${pid}.`));
  if (!file) {
    log(`no CPU profile of process ${pid} in ${dir}`);
    return;
  }
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const categoryOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = categoryOf.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    const own = CATEGORIES.find(([, test]) => test(frame))?.[0];
    const up = parent.get(id);
    const category = own ?? (up === undefined ? 'other' : classify(up));
    categoryOf.set(id, category);
    return category;
  };
  const names = [...CATEGORIES.map(([name]) => name).filter((n) => n !== 'idle'), 'other'];
  log('');
  log(`where each target's time per request went under load, from the server's CPU profile (${file}), µs per request:`);
  log(`${'target'.padEnd(30)}${'busy'.padStart(7)}${names.map((n) => n.padStart(Math.max(8, n.length + 2))).join('')}`);
  for (const w of windows) {
    const totals = new Map<string, number>();
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i]!;
      const ns = BigInt(Math.round(at * 1000));
      if (ns < w.from || ns > w.to) continue;
      const category = classify(profile.samples[i]!);
      // Each sample stands for the time since the one before it.
      totals.set(category, (totals.get(category) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
    const perRequest = (us: number) => us / Math.max(1, w.requests);
    const busy = [...totals].filter(([c]) => c !== 'idle').reduce((sum, [, us]) => sum + us, 0);
    log(
      `${w.label.padEnd(30)}${perRequest(busy).toFixed(0).padStart(7)}${names
        .map((n) =>
          perRequest(totals.get(n) ?? 0)
            .toFixed(0)
            .padStart(Math.max(8, n.length + 2)),
        )
        .join('')}`,
    );
  }
  log(`busy: the server's main thread not idle; each column: the samples whose innermost named frame is of that kind`);
}
