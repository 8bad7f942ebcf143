import path from 'node:path';
import { builtinModules } from 'node:module';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const NODE_ONLY = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`), 'undici']);

/** Bundles `source` for a browser; esbuild refuses any node: import on that platform. */
async function bundleForBrowser(source: string) {
  const result = await build({
    stdin: { contents: source, resolveDir: ROOT, loader: 'ts' },
    platform: 'browser',
    bundle: true,
    write: false,
    format: 'esm',
    conditions: ['browser'],
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]?.text ?? '', metafile: result.metafile, errors: result.errors };
}

function importsOf(metafile: Metafile): string[] {
  return Object.values(metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
}

describe('browser bundle', () => {
  it('bundles the default entry with standard fetch only: no node builtins, no undici', async () => {
    const { code, metafile, errors } = await bundleForBrowser(`export * from './packages/client/src/index.ts';`);
    expect(errors).toEqual([]);
    expect(importsOf(metafile).filter((p) => NODE_ONLY.has(p) || p.startsWith('node:'))).toEqual([]);
    expect(Object.keys(metafile.inputs).filter((file) => /undici|node\.ts$/.test(file))).toEqual([]);
    // The bundle runs as a module on its own and offers the client.
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Record<string, unknown>;
    expect(typeof mod.createClient).toBe('function');
    expect(typeof mod.parseItemRef).toBe('function');
  });

  it('resolves the built package to its browser-safe entry outside Node', async () => {
    const { metafile, errors } = await bundleForBrowser(`export { createClient } from '@mapi/client';`);
    expect(errors).toEqual([]);
    const files = Object.keys(metafile.inputs);
    expect(files).toContain('packages/client/dist/index.js');
    expect(files).not.toContain('packages/client/dist/node.js');
  });
});
