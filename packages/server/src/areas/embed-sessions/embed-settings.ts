/**
 * What sessions need of the tenant's embed settings (`GET/PUT /api/v1/tenant/embed-settings`):
 * whether embedding is on, and the browser origins the embed routes answer (CORS).
 */
export interface EmbedAccountSettings {
  enabled: boolean;
  allowedOrigins: string[];
}

export type EmbedSettingsReader = (tenantId: number) => Promise<EmbedAccountSettings>;

/** Until a tenant saves its settings: embedding on, no browser origin allowed. */
export const DEFAULT_EMBED_SETTINGS: EmbedAccountSettings = { enabled: true, allowedOrigins: [] };
