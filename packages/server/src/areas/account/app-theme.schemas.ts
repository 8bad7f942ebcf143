import { Type, type Static, type TSchema } from 'typebox';
import { Nullable, ref } from '../../shared/schemas.js';

/**
 * The reference's AppTheme (5.3), as `GET /api/v1/app-config` answers it, and the input an admin
 * sets it with (`PUT /api/v1/tenant/app-config` `{appTheme}`, extension). The answer always carries
 * every member, null where the admin set none; the input may leave a nullable member out.
 */

/** `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, or `rgb()`, `rgba()`, `hsl()`, `hsla()` of numbers: nothing that could close a CSS value. */
export const COLOR_PATTERN = '^(#([0-9A-Fa-f]{3,4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})|(rgba?|hsla?)\\([0-9., %/+-]{1,60}(deg)?[0-9., %/+-]{0,30}\\))$';
const COLOR_TEXT = 'A CSS colour: `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, or `rgb()`, `rgba()`, `hsl()`, `hsla()` of numbers; at most 100 characters.';
export const URL_MAX = 2048;
const URL_TEXT =
  'An `https://` URL or a path on this host starting with a single `/`; at most 2048 printable ASCII characters, without quotes, `<`, `>` or backslashes.';

const Color = Type.String({ maxLength: 100, pattern: COLOR_PATTERN, description: COLOR_TEXT });
const ThemeUrl = Type.String({ minLength: 1, maxLength: URL_MAX, pattern: '^(https://|/)', description: URL_TEXT });
const Hue = Type.Number({ minimum: 0, maximum: 360 });
const Percent = Type.Number({ minimum: 0, maximum: 100 });
const SurfaceMode = () => Type.Enum(['neutral', 'tinted']);

// ---- The answer (reference shape: every member present) ----

export const AppThemeSeedSchema = Type.Object(
  { color: Nullable(Type.String()), hue: Nullable(Type.Number()), saturation: Nullable(Type.Number()) },
  { $id: 'AppThemeSeed', description: 'A colour seed: `hue` 0–360, `saturation` 0–100; every member may be null.' },
);

const Seed = Nullable(ref(AppThemeSeedSchema));

export const AppThemePaletteSchema = Type.Object(
  {
    base: Seed,
    accent: Seed,
    contrastLevel: Nullable(Type.Number({ description: '0–100.' })),
    pastel: Nullable(Type.Boolean()),
    surfaceMode: Nullable(SurfaceMode()),
    themes: Nullable(
      Type.Object({
        danger: Seed,
        warning: Seed,
        success: Seed,
        note: Seed,
        code: Nullable(Type.Object({ saturation: Nullable(Type.Number({ description: '0–100.' })) })),
      }),
    ),
  },
  { $id: 'AppThemePalette', description: 'Every member may be null.' },
);

export const AppThemeSchemeSchema = Type.Object(
  {
    accentColor: Type.String(),
    backgroundColor: Type.String(),
    foregroundColor: Type.String(),
    logoUrl: Nullable(Type.String({ description: 'Null: no logo for this scheme.' })),
    contrast: Type.Number({ description: '0–100.' }),
  },
  { $id: 'AppThemeScheme', description: 'One colour scheme (deprecated in the reference in favour of `palette`, still required there).' },
);

const FontUse = Type.Object({ fontRef: Type.String(), fontWeight: Type.Number() });

export const AppThemeTypographySchema = Type.Object(
  {
    fonts: Type.Array(
      Type.Object({
        id: Type.String(),
        url: Type.String(),
        format: Type.String(),
        family: Type.Optional(Type.String()),
        name: Type.Optional(Type.String()),
      }),
    ),
    body: FontUse,
    heading: FontUse,
  },
  { $id: 'AppThemeTypography' },
);

export const AppThemeSchema = Type.Object(
  {
    palette: ref(AppThemePaletteSchema),
    logoUrl: Nullable(Type.String({ description: 'Null: no logo.' })),
    light: ref(AppThemeSchemeSchema),
    dark: ref(AppThemeSchemeSchema),
    typography: Type.Optional(ref(AppThemeTypographySchema)),
  },
  { $id: 'AppTheme', description: 'The reference’s AppTheme (5.3). `typography` is present only when the admin set one.' },
);
export type AppTheme = Static<typeof AppThemeSchema>;

export const appThemeSchemas = [AppThemeSeedSchema, AppThemePaletteSchema, AppThemeSchemeSchema, AppThemeTypographySchema, AppThemeSchema];

// ---- The input (strict: unknown keys, bad colours, out-of-range numbers are 400) ----

const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const strict = { additionalProperties: false } as const;

const SeedInput = Type.Object(
  { color: optionalNullable(Color), hue: optionalNullable(Hue), saturation: optionalNullable(Percent) },
  { ...strict, description: 'A colour seed; a member left out is null.' },
);

const PaletteInput = Type.Object(
  {
    base: optionalNullable(SeedInput),
    accent: optionalNullable(SeedInput),
    contrastLevel: optionalNullable(Percent),
    pastel: optionalNullable(Type.Boolean()),
    surfaceMode: optionalNullable(SurfaceMode()),
    themes: optionalNullable(
      Type.Object(
        {
          danger: optionalNullable(SeedInput),
          warning: optionalNullable(SeedInput),
          success: optionalNullable(SeedInput),
          note: optionalNullable(SeedInput),
          code: optionalNullable(Type.Object({ saturation: optionalNullable(Percent) }, strict)),
        },
        strict,
      ),
    ),
  },
  { ...strict, description: 'Every member may be null or left out (null).' },
);

const SchemeInput = Type.Object(
  {
    accentColor: Color,
    backgroundColor: Color,
    foregroundColor: Color,
    logoUrl: Nullable(ThemeUrl),
    contrast: Percent,
  },
  { ...strict, description: 'Every member is required; `logoUrl` may be null (no logo).' },
);

const FontUseInput = Type.Object({ fontRef: Type.String({ minLength: 1, maxLength: 200 }), fontWeight: Type.Number({ minimum: 1, maximum: 1000 }) }, strict);

const TypographyInput = Type.Object(
  {
    fonts: Type.Array(
      Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 100 }),
          url: ThemeUrl,
          format: Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: 'A CSS font format such as `woff2`.' }),
          family: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        },
        strict,
      ),
      { maxItems: 16 },
    ),
    body: FontUseInput,
    heading: FontUseInput,
  },
  strict,
);

export const AppThemeInput = Type.Object(
  {
    palette: PaletteInput,
    logoUrl: Nullable(ThemeUrl),
    light: SchemeInput,
    dark: SchemeInput,
    typography: Type.Optional(TypographyInput),
  },
  {
    ...strict,
    description:
      'The whole theme, replacing the one set before: `palette`, `logoUrl`, `light` and `dark` are required, `typography` is optional. Null clears the theme.',
  },
);
export type AppThemeInput = Static<typeof AppThemeInput>;
