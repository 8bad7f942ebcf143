import { defineArea } from '../../platform/index.js';
import { embedSettings } from '../account/index.js';
import { DEFAULT_EMBED_PAGE_DIR, loadPageFiles } from './embed-page.assets.js';
import { embedPageRoutes } from './embed-page.routes.js';

export interface EmbedPageConfig {
  /** Where the built page is (packages/embed/dist); absent: beside this build. */
  pageDir?: string | undefined;
  /** Page views a minute per client address; 0: unlimited. */
  perIpPerMinute: number;
}

/** The embedded dashboard page: the HTML a customer's iframe opens, and its fingerprinted files. */
export const embedPageArea = defineArea('embed-page', ({ platform: { store } }, config: EmbedPageConfig) => {
  const files = loadPageFiles(config.pageDir ?? DEFAULT_EMBED_PAGE_DIR);
  return {
    services: {},
    routes: ({ resolveTenant }) => [
      embedPageRoutes(files, {
        resolveTenant,
        allowedOrigins: async (tenantId) => (await embedSettings(store.db, tenantId)).allowedOrigins,
        perIpPerMinute: config.perIpPerMinute,
      }),
    ],
  };
});
