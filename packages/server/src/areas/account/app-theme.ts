import type { FieldError } from '../../shared/problems.js';
import { URL_MAX, type AppTheme, type AppThemeInput } from './app-theme.schemas.js';

/**
 * Whether `value` may be a theme's logo or font URL: `https://host/…`, or a path on this host
 * (`/…`, never `//host`, which a browser reads as another host). Printable ASCII only, and none
 * of the characters that could end an HTML attribute or a CSS `url()`.
 */
export function isThemeUrl(value: string): boolean {
  if (value.length === 0 || value.length > URL_MAX || !/^[!-~]+$/.test(value) || /["'<>\\`]/.test(value)) return false;
  if (value.startsWith('/')) return !value.startsWith('//');
  if (!value.toLowerCase().startsWith('https://')) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** What the body schema cannot check of a theme: its URLs. Pointers name the offending member. */
export function themeErrors(theme: AppThemeInput): FieldError[] {
  const urls: Array<[string, string | null]> = [
    ['/body/appTheme/logoUrl', theme.logoUrl],
    ['/body/appTheme/light/logoUrl', theme.light.logoUrl],
    ['/body/appTheme/dark/logoUrl', theme.dark.logoUrl],
    ...(theme.typography?.fonts ?? []).map((font, i): [string, string] => [`/body/appTheme/typography/fonts/${i}/url`, font.url]),
  ];
  return urls
    .filter((entry): entry is [string, string] => entry[1] !== null && !isThemeUrl(entry[1]))
    .map(([pointer]) => ({ pointer, message: 'must be an https:// URL or a path starting with a single /, without quotes, <, > or backslashes' }));
}

type SeedInput = NonNullable<AppThemeInput['palette']['base']>;
type Seed = AppTheme['palette']['base'];

const seed = (s: SeedInput | null | undefined): Seed => (s == null ? null : { color: s.color ?? null, hue: s.hue ?? null, saturation: s.saturation ?? null });

/**
 * The theme in the reference's shape, every nullable member present (null where none was set):
 * what is stored, and what `app-config` answers.
 */
export function toAppTheme(input: AppThemeInput): AppTheme {
  const { palette, light, dark, typography } = input;
  const themes = palette.themes;
  const scheme = (s: AppThemeInput['light']) => ({
    accentColor: s.accentColor,
    backgroundColor: s.backgroundColor,
    foregroundColor: s.foregroundColor,
    logoUrl: s.logoUrl,
    contrast: s.contrast,
  });
  const theme: AppTheme = {
    palette: {
      base: seed(palette.base),
      accent: seed(palette.accent),
      contrastLevel: palette.contrastLevel ?? null,
      pastel: palette.pastel ?? null,
      surfaceMode: palette.surfaceMode ?? null,
      themes:
        themes == null
          ? null
          : {
              danger: seed(themes.danger),
              warning: seed(themes.warning),
              success: seed(themes.success),
              note: seed(themes.note),
              code: themes.code == null ? null : { saturation: themes.code.saturation ?? null },
            },
    },
    logoUrl: input.logoUrl,
    light: scheme(light),
    dark: scheme(dark),
  };
  if (typography !== undefined) {
    theme.typography = {
      fonts: typography.fonts.map((f) => ({
        id: f.id,
        url: f.url,
        format: f.format,
        ...(f.family === undefined ? {} : { family: f.family }),
        ...(f.name === undefined ? {} : { name: f.name }),
      })),
      body: { fontRef: typography.body.fontRef, fontWeight: typography.body.fontWeight },
      heading: { fontRef: typography.heading.fontRef, fontWeight: typography.heading.fontWeight },
    };
  }
  return theme;
}

/** The stored theme (written by `toAppTheme`), or null when none is set or what is stored is not a theme. */
export function storedAppTheme(value: unknown): AppTheme | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const stored = value as Partial<AppThemeInput>;
  if (!stored.palette || !stored.light || !stored.dark) return null;
  return toAppTheme({ ...stored, logoUrl: stored.logoUrl ?? null } as AppThemeInput);
}
