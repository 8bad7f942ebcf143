import { ApiError, type FieldError } from '../../shared/problems.js';

/** Checks of setting values the body schema cannot express, shared by the account's settings. */

export function invalid(errors: FieldError[]): ApiError {
  return new ApiError('VALIDATION_FAILED', errors.map((e) => `${e.pointer.replace('/body/', '')} ${e.message}`).join('; '), { errors });
}

/** A BCP 47 language tag in canonical case (`en-us` → `en-US`), or undefined when it is not one. */
export function canonicalLocale(tag: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

/** Whether the runtime's zone database knows `name` (an IANA name such as `Europe/Berlin`, or `UTC`); offsets are not names. */
export function isTimeZoneName(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+/-]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `value` is exactly an origin: `http(s)://host[:port]`, lower-case host, no default
 * port, no path, query, fragment or credentials; the form browsers send in `Origin`, so a plain
 * string comparison decides.
 */
export function isExactOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
}
