import type { ReleaseChannel } from '../../db/tables.js';

/**
 * The runtime versions deployments may run, per release channel, oldest first (RUNTIME_VERSIONS),
 * and the regions they may run in (REGIONS). Both come from the server's configuration: this
 * product runs every runtime itself, so a version or a region is what its operator offers.
 */
export interface Catalog {
  versions: Record<ReleaseChannel, string[]>;
  regions: RegionEntry[];
}

export interface RegionEntry {
  id: number;
  name: string;
  title: string;
  provider: string;
}

export const DEFAULT_CATALOG: Catalog = {
  versions: { release: ['1.0.0', '1.1.0'], latest: ['1.1.0', '1.2.0'] },
  regions: [{ id: 1, name: 'local', title: 'This server', provider: 'platform' }],
};

const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** `release=1.0.0,1.1.0;latest=1.2.0` (each channel's versions oldest first); null for a malformed value. */
export function parseVersions(text: string): Record<ReleaseChannel, string[]> | null {
  const result: Record<ReleaseChannel, string[]> = { release: [], latest: [] };
  for (const part of text
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [channel, list = ''] = part.split('=');
    if (channel !== 'release' && channel !== 'latest') return null;
    const versions = list
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    if (versions.length === 0 || versions.some((v) => !VERSION.test(v))) return null;
    result[channel] = versions;
  }
  return result.release.length > 0 && result.latest.length > 0 ? result : null;
}

/** `local,eu-west` (names, letters, digits and dashes); null for a malformed value. */
export function parseRegions(text: string): RegionEntry[] | null {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0 || names.some((n) => !/^[a-z0-9][a-z0-9-]{0,62}$/.test(n)) || new Set(names).size !== names.length) return null;
  return names.map((name, i) => ({ id: i + 1, name, title: name, provider: 'platform' }));
}

export function newestIn(catalog: Catalog, channel: ReleaseChannel): string {
  const list = catalog.versions[channel];
  return list[list.length - 1] as string;
}

/**
 * A version as clients send it (reference 1.4): `1.7.20`, `v1.7.20`, or a full image reference
 * ending in `:v1.7.20`; the plain version, or null when it is none of these.
 */
export function plainVersion(input: string): string | null {
  const tag = input.includes(':') ? input.slice(input.lastIndexOf(':') + 1) : input.includes('/') ? '' : input;
  const plain = tag.startsWith('v') ? tag.slice(1) : tag;
  return VERSION.test(plain) ? plain : null;
}

/** The container image a version runs as (read-only in the settings: derived, never written). */
export const imageOf = (version: string) => `mapi/runtime:v${version}`;
