import path from 'node:path';

/** A word a POSIX shell reads back unchanged: paths with spaces stay one argument when pasted. */
function shellWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A path as short as it can be said from where the server was started. */
function shownPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/**
 * What the first start prints: the admin key, and two lines to paste, a curl call and `mapi login`,
 * with this server's URL and, for the self-signed certificate, the file to trust. The key goes in
 * the curl line as is (it is on the screen already); login reads it from the terminal instead, so
 * it stays out of the shell history.
 */
export function firstKeyBanner(input: { email: string; key: string; url: string; selfSignedCert: string | null; cwd?: string }): string {
  const cwd = input.cwd ?? process.cwd();
  const url = input.url.replace(/\/+$/, '');
  const ca = input.selfSignedCert === null ? null : shellWord(shownPath(input.selfSignedCert, cwd));
  return [
    '',
    `Admin API key for ${input.email} (shown once; store it now):`,
    '',
    `  ${input.key}`,
    '',
    'Try it:',
    `  curl ${ca ? `--cacert ${ca} ` : ''}-H "Authorization: Bearer ${input.key}" ${url}/api/v1/users/me`,
    '',
    'Log the CLI in (paste the key when it asks):',
    `  npx mapi login --url ${url}${ca ? ` --ca-cert ${ca}` : ''} --token-stdin`,
    '',
  ].join('\n');
}
