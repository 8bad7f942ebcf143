import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The documentation stands on its own: every variable the server reads is in the configuration
 * guide, every relative link of README.md and docs/ leads to a file (and heading) of this
 * repository, and nothing points outside it.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SRC = path.join(ROOT, 'packages/server/src');
const CONFIGURATION_DOC = 'docs/operator/configuration.md';

/** The config module reads its variables through these helpers, or `env` itself. */
const CONFIG_READS = [
  /\b(?:value|wholeNumber|milliseconds|yesNo)\(\s*'([A-Z][A-Z0-9_]*)'/g,
  /\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g,
];
const PROCESS_ENV = /\bprocess\.env(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function matches(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((m) => m.slice(1).find((g) => g !== undefined) ?? '');
}

/**
 * Every variable the server reads: the config module's (src/config.ts), and any `process.env.X`
 * elsewhere in the server's sources. The runtime program (src/semantic-layer/) is left out: it
 * reads its deployment's own variables (DB_TYPE, DB_URL, …), set through the API, not the server's.
 */
function serverVariables(): string[] {
  const names = new Set<string>();
  const config = fs.readFileSync(path.join(SRC, 'config.ts'), 'utf8');
  for (const pattern of CONFIG_READS) for (const name of matches(config, pattern)) names.add(name);
  for (const file of sourceFiles(SRC)) {
    if (path.relative(SRC, file).startsWith(`semantic-layer${path.sep}`)) continue;
    for (const name of matches(fs.readFileSync(file, 'utf8'), PROCESS_ENV)) names.add(name);
  }
  return [...names].sort();
}

/** The variables a configuration guide does not name (as `NAME`, in code). */
function undocumented(variables: string[], doc: string): string[] {
  return variables.filter((name) => !doc.includes(`\`${name}\``) && !new RegExp(`\`[^\`\\n]*\\b${name}\\b[^\`\\n]*\``).test(doc));
}

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return entry.name.endsWith('.md') ? [full] : [];
    });
  return [path.join(ROOT, 'README.md'), ...walk(path.join(ROOT, 'docs'))];
}

/** Markdown without fenced blocks and code spans, where a `[x](y)` is an example, not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const plain = (heading ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

interface BrokenLink {
  file: string;
  link: string;
  problem: string;
}

function brokenLinks(files: string[], root = ROOT): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const headings = (file: string) => {
    let set = anchorsOf.get(file);
    if (!set) anchorsOf.set(file, (set = anchors(fs.readFileSync(file, 'utf8'))));
    return set;
  };
  for (const file of files) {
    const rel = path.relative(root, file);
    for (const [, target] of prose(fs.readFileSync(file, 'utf8')).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const link = target ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [pathPart = '', anchor] = link.split('#', 2);
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (path.relative(root, resolved).startsWith('..') || path.isAbsolute(pathPart)) {
        broken.push({ file: rel, link, problem: 'points outside the repository' });
        continue;
      }
      if (!fs.existsSync(resolved)) {
        broken.push({ file: rel, link, problem: 'no such file' });
        continue;
      }
      if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md') && !headings(resolved).has(decodeURIComponent(anchor).toLowerCase())) {
        broken.push({ file: rel, link, problem: `no heading #${anchor} in ${path.relative(root, resolved)}` });
      }
    }
  }
  return broken;
}

describe('documentation', () => {
  it('finds the variables the server reads', () => {
    const variables = serverVariables();
    // A guard for the extraction itself: should its patterns stop matching, the next test would pass on nothing.
    for (const known of [
      'PORT',
      'DATABASE_URL',
      'TLS_CERT',
      'MAPI_SECRET_KEY',
      'NODE_ENV',
      'SMTP_HOST',
      'SQL_API_MAX_CATALOGS',
      'QUERY_CONTINUE_WAIT_MS',
      'PATH',
    ]) {
      expect(variables).toContain(known);
    }
    expect(variables.length).toBeGreaterThan(70);
  });

  it(`names every configuration variable the server reads in ${CONFIGURATION_DOC}`, () => {
    const doc = fs.readFileSync(path.join(ROOT, CONFIGURATION_DOC), 'utf8');
    expect(undocumented(serverVariables(), doc)).toEqual([]);
  });

  it('notices a variable the guide leaves out', () => {
    const doc = fs.readFileSync(path.join(ROOT, CONFIGURATION_DOC), 'utf8');
    const without = doc.replaceAll('RUNTIME_LOG_LINES', 'RUNTIME_LOG');
    expect(undocumented(serverVariables(), without)).toContain('RUNTIME_LOG_LINES');
    expect(undocumented(['NOT_A_VARIABLE_ANYONE_READS'], doc)).toEqual(['NOT_A_VARIABLE_ANYONE_READS']);
  });

  it('resolves every relative link of README.md and docs/ to a file and heading of the repository', () => {
    expect(brokenLinks(markdownFiles())).toEqual([]);
  });

  it('notices a broken link, a missing heading and a link out of the repository', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-docs-'));
    try {
      fs.mkdirSync(path.join(root, 'docs'));
      fs.writeFileSync(path.join(root, 'README.md'), '# Project\n');
      const file = path.join(root, 'docs', 'page.md');
      fs.writeFileSync(
        file,
        '# A page\n\n## Its part\n\n[ok](#its-part) [ok](../README.md#project) [gone](missing.md) [no heading](#nowhere) [out](../../shared/DESIGN.md) `[code](not-a-link.md)`\n\n```\n[fenced](not-a-link-either.md)\n```\n',
      );
      expect(brokenLinks([file], root).map((b) => `${b.link}: ${b.problem}`)).toEqual([
        'missing.md: no such file',
        '#nowhere: no heading #nowhere in docs/page.md',
        '../../shared/DESIGN.md: points outside the repository',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('points nowhere outside the repository', () => {
    const pointing = markdownFiles().filter((file) => fs.readFileSync(file, 'utf8').includes('../shared'));
    expect(pointing.map((file) => path.relative(ROOT, file))).toEqual([]);
  });

  it('keeps the README short: what it is, the commands, the five-minute path, where to read on', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });
});
