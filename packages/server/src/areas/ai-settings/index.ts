/**
 * The AI settings area's public entry: what other areas may use of it. AI features take `ai`
 * (`use(aiSettingsArea).ai`): the account's model client and limits, its switch, the monthly
 * budget and the usage counted against it.
 */
export { aiSettingsArea, type AiSettingsConfig } from './ai-settings.module.js';
export { AI_DEFAULTS, type AiService } from './ai-settings.service.js';
export type { AiLimits } from './ai-settings.schemas.js';
export type { Spender } from './ai-settings.store.js';
