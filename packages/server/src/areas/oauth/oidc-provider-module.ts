/**
 * `oidc-provider`, loaded on the first OAuth request rather than at start: a process that never
 * serves OAuth (the admin command, most tests) never loads it. On import the library warns on
 * stderr when Node is older than 22 LTS; this product runs on Node 20.19+ (its stack), where the
 * library works and is tested, so that one line is left out of stderr, whose other lines stay.
 */
let loading: Promise<typeof import('oidc-provider')> | undefined;

export function loadOidcProvider(): Promise<typeof import('oidc-provider')> {
  loading ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('oidc-provider WARNING: Unsupported runtime')) return;
      warn(...args);
    };
    try {
      return await import('oidc-provider');
    } finally {
      console.warn = warn;
    }
  })();
  return loading;
}
