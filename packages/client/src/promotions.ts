import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { PromoteWorkbookInput, WorkbookPromotion, WorkbookPromotionLink, WorkbookPromotionPreview } from './types.js';

/** Options of `workbooks.promote`. */
export interface PromoteWorkbookOptions {
  /**
   * Sent as `Idempotency-Key`: the same key and body answer the promotion the key made, another
   * body is a 422. Absent: a fresh key per call, so the client's own retries of this call never
   * promote twice.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A workbook's promotion to another deployment (extensions, docs/api/workbook-promotion.md). */
export interface WorkbookPromotions {
  /** What a promotion would do now, and the members the target's model lacks (empty: it would succeed). Writes nothing. */
  previewPromotion(
    deploymentId: number,
    workbookId: number,
    input: PromoteWorkbookInput,
    options?: { signal?: AbortSignal },
  ): Promise<WorkbookPromotionPreview>;
  /**
   * Promotes the workbook, its reports and its dashboard to `input.targetDeploymentId`; again to
   * the same deployment, it updates the copy made before. Missing members are a 422 ApiError
   * (`missingMembers` in its body).
   */
  promote(deploymentId: number, workbookId: number, input: PromoteWorkbookInput, options?: PromoteWorkbookOptions): Promise<WorkbookPromotion>;
  /** The newest promotion the workbook took part in (as source or as copy); 404 PROMOTION_NOT_FOUND when none. */
  promotion(deploymentId: number, workbookId: number, options?: { signal?: AbortSignal }): Promise<WorkbookPromotion>;
  /** Its promotions, newest first, following the pages. */
  promotions(deploymentId: number, workbookId: number, options?: ListOptions): AsyncIterable<WorkbookPromotion>;
  /** The links between it and its promoted copies (or the workbook it is a copy of), oldest first. */
  promotionLinks(deploymentId: number, workbookId: number, options?: ListOptions): AsyncIterable<WorkbookPromotionLink>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** A key for one promotion call: random, so two calls never share one. */
function freshKey(): string {
  const crypto = globalThis.crypto;
  if (crypto && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function createPromotions(api: RawClient): WorkbookPromotions {
  const path = (deploymentId: number, workbookId: number) => ({ path: { deploymentId, workbookId } });
  return {
    previewPromotion: async (deploymentId, workbookId, input, { signal } = {}) =>
      unwrap(
        await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/promotion-previews', {
          params: path(deploymentId, workbookId),
          body: input,
          ...withSignal(signal),
        }),
      ),
    promote: async (deploymentId, workbookId, input, { idempotencyKey, signal } = {}) =>
      unwrap(
        await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/promotions', {
          params: { ...path(deploymentId, workbookId), header: { 'idempotency-key': idempotencyKey ?? freshKey() } },
          body: input,
          ...withSignal(signal),
        }),
      ),
    promotion: async (deploymentId, workbookId, { signal } = {}) =>
      unwrap(
        await api.GET('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/promotion', {
          params: path(deploymentId, workbookId),
          ...withSignal(signal),
        }),
      ),
    promotions: (deploymentId, workbookId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/promotions', {
            params: { ...path(deploymentId, workbookId), query: { first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
    promotionLinks: (deploymentId, workbookId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/promotion-links', {
            params: { ...path(deploymentId, workbookId), query: { first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
  };
}
