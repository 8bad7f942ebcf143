import { buildApp, type App } from './app.js';
import { bootstrapDefaultTenant } from './areas/tenants/tenants.service.js';
import type { Config } from './config.js';
import { migrate, storeFor, type Store } from './db/database.js';
import { loadTls } from './tls.js';

export interface RunningServer {
  app: App;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the store, migrates, bootstraps, and listens over HTTPS. Used by main.ts and by tests
 * that need a real listening server.
 */
export async function startServer(config: Config, print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RunningServer> {
  const tls = await loadTls(config);
  const store = storeFor(config);
  let app: App | null = null;
  try {
    await migrate(store);
    const boot = await bootstrapDefaultTenant(store, config.adminEmail, config.adminApiKey);
    if (boot.generatedKey) {
      print(
        [
          '',
          `Admin API key for ${boot.admin.email} (shown once; store it now):`,
          '',
          `  ${boot.generatedKey}`,
          '',
          'Use it as: Authorization: Bearer <key>',
          '',
        ].join('\n'),
      );
    }
    app = await buildApp({
      store,
      baseDomain: config.baseDomain,
      https: { key: tls.key, cert: tls.cert },
      logger: { level: config.logLevel },
      rateLimitPerMinute: config.rateLimitPerMinute,
      corsOrigins: config.corsOrigins,
      ...(config.publicUrl !== null ? { publicUrl: config.publicUrl } : {}),
    });
    if (boot.configuredKeyRevoked) app.log.warn('ADMIN_API_KEY names a key that was revoked; it stays revoked. Remove it from the environment or set a new one.');
    if (boot.rotatedKeys > 0) app.log.info(`ADMIN_API_KEY changed: revoked ${boot.rotatedKeys} earlier value(s)`);
    if (boot.adminWarning) app.log.warn(boot.adminWarning);
    const address = await app.listen({ port: config.port, host: config.host });
    app.log.info({ tls: tls.source, store: store.dialect }, `mapi listening on ${address}`);
    const running = app;
    return {
      app: running,
      store,
      url: address,
      async close() {
        await running.close();
        await store.close();
      },
    };
  } catch (error) {
    // A failed listen (port taken) leaves a built app: close it so its hooks run and nothing lingers.
    await app?.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}
