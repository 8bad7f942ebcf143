import path from 'node:path';
import { buildApp, type App } from './app.js';
import { bootstrapDefaultTenant } from './areas/tenants/tenants.service.js';
import type { Config } from './config.js';
import { migrate, openStore, type Store } from './db/database.js';
import { loadTls } from './tls.js';

export function storeFor(config: Config): Store {
  return config.databaseUrl
    ? openStore({ dialect: 'postgres', url: config.databaseUrl })
    : openStore({ dialect: 'sqlite', file: path.join(config.dataDir, 'mapi.sqlite') });
}

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
    const app = await buildApp({
      store,
      baseDomain: config.baseDomain,
      https: { key: tls.key, cert: tls.cert },
      logger: { level: config.logLevel },
    });
    if (boot.configuredKeyRevoked) app.log.warn('ADMIN_API_KEY names a key that was revoked; it stays revoked. Remove it from the environment or set a new one.');
    const address = await app.listen({ port: config.port, host: config.host });
    app.log.info({ tls: tls.source, store: store.dialect }, `mapi listening on ${address}`);
    return {
      app,
      store,
      url: address,
      async close() {
        await app.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
