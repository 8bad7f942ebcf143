import type { Executor } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { normalizeExternalId, SYNTHETIC_EMAIL_DOMAIN } from '../embed-tenants/index.js';
import { globalGroupNamesOf, attributeValuesOf } from '../embed-tenants/index.js';
import { provisionEmbedUser } from '../embed-tenants/index.js';
import { findEmbedTenant } from '../embed-tenants/index.js';
import { findEmbedUserByExternalId } from '../embed-tenants/index.js';
import { findUserByEmail, findUserById } from '../users/index.js';
import type { NotificationRecipient, RecipientInput, RemoveRecipientInput } from './notifications.schemas.js';
import {
  deleteRecipientsByKeys,
  findEmbedUserInTenant,
  insertRecipient,
  recipientsByKeys,
  recipientViewsByIds,
  setRecipientSecurityContext,
  type RecipientView,
} from './notifications.store.js';

/*
 * A notification's recipients (reference 6.6-6.8). Adding is checked whole before anything is
 * written: SLACK is not supported yet, and every recipient must resolve to an email (a console
 * user has one; an embed user needs an `email`, an email-shaped `externalId`, or a real address
 * stored already). Embed recipients are provisioned like a session provisions them (4.15): an
 * unknown one is created, and the groups and attributes sent are applied to the embed user.
 */

export interface FieldError {
  pointer: string;
  message: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const isRealEmail = (email: string) => EMAIL.test(email) && !email.toLowerCase().endsWith(`.${SYNTHETIC_EMAIL_DOMAIN}`);

export function toRecipient(row: RecipientView): NotificationRecipient {
  if (row.type === 'USER') return { type: 'USER', userId: row.user_id, email: row.user_email };
  if (row.type === 'EMBED_USER') {
    return {
      type: 'EMBED_USER',
      embedUserId: row.embed_user_id,
      embedTenantName: row.embed_tenant_name,
      externalId: row.embed_external_id,
      username: row.embed_username,
      email: row.embed_email,
    };
  }
  return { type: row.type, channelId: row.channel_id, channelName: row.channel_name };
}

export type CheckedRecipient =
  | { type: 'USER'; index: number; userId: number }
  | { type: 'EMBED_USER'; index: number; input: RecipientInput; embedTenantName: string; externalId: string; email: string };

/** Resolves every entry, or refuses the whole request with every problem found (400). */
export async function checkRecipients(db: Executor, tenantId: number, entries: RecipientInput[]): Promise<CheckedRecipient[]> {
  const errors: FieldError[] = [];
  const checked: CheckedRecipient[] = [];
  for (const [index, entry] of entries.entries()) {
    const at = `/body/recipients/${index}`;
    if (entry.type === 'SLACK') {
      errors.push({ pointer: `${at}/type`, message: 'SLACK recipients are not supported yet' });
      continue;
    }
    if (entry.type === 'USER') {
      if (entry.userId == null && entry.email == null) {
        errors.push({ pointer: at, message: 'a USER recipient needs userId or email' });
        continue;
      }
      const byId = entry.userId != null ? await findUserById(db, tenantId, entry.userId) : undefined;
      const byEmail = entry.email != null ? await findUserByEmail(db, tenantId, entry.email) : undefined;
      const user = byId ?? byEmail;
      if (!user || user.deactivated_at !== null) {
        errors.push({
          pointer: entry.userId != null ? `${at}/userId` : `${at}/email`,
          message: 'names no active user of this account, so it resolves to no email',
        });
        continue;
      }
      if (byId && entry.email != null && byEmail?.id !== byId.id) {
        errors.push({ pointer: `${at}/email`, message: `is not the email of user ${byId.id}` });
        continue;
      }
      checked.push({ type: 'USER', index, userId: user.id });
      continue;
    }
    if (entry.embedTenantName == null || entry.externalId == null) {
      errors.push({
        pointer: entry.embedTenantName == null ? `${at}/embedTenantName` : `${at}/externalId`,
        message: 'an EMBED_USER recipient needs embedTenantName and externalId',
      });
      continue;
    }
    const embedTenantName = entry.embedTenantName.toLowerCase();
    const externalId = normalizeExternalId(entry.externalId);
    let email: string | undefined;
    if (entry.email != null) {
      if (!EMAIL.test(entry.email)) {
        errors.push({ pointer: `${at}/email`, message: 'is not an email address' });
        continue;
      }
      email = entry.email.toLowerCase();
    } else if (EMAIL.test(externalId)) {
      email = externalId;
    } else {
      const embedTenant = await findEmbedTenant(db, tenantId, embedTenantName);
      const existing = embedTenant && (await findEmbedUserByExternalId(db, tenantId, embedTenant.id, externalId));
      if (existing && isRealEmail(existing.email)) email = existing.email;
    }
    if (email === undefined) {
      errors.push({ pointer: `${at}/email`, message: 'is required: the externalId is not an email address and the embed user has none' });
      continue;
    }
    checked.push({ type: 'EMBED_USER', index, input: entry, embedTenantName, externalId, email });
  }
  if (errors.length > 0) {
    throw new ApiError('VALIDATION_FAILED', `${errors.length} recipient${errors.length === 1 ? '' : 's'} cannot be added; nothing was changed.`, { errors });
  }
  return checked;
}

/** What decides whether an embed recipient changed: its address, groups and attribute values. */
async function embedState(trx: Executor, tenantId: number, embedUserId: number, email: string): Promise<string> {
  const groups = (await globalGroupNamesOf(trx, tenantId, embedUserId)).map((g) => g.toLowerCase()).sort();
  const attributes = (await attributeValuesOf(trx, tenantId, embedUserId)).map((a) => `${a.attribute_id}=${a.value}`).sort();
  return JSON.stringify({ email, groups, attributes });
}

/** Adds the checked recipients in the caller's transaction; an existing one is updated when its embed properties changed. */
export async function addRecipients(
  trx: Executor,
  tenantId: number,
  notificationId: number,
  checked: CheckedRecipient[],
  options: { userLimit: number; at: string },
) {
  const outcome = new Map<number, 'created' | 'updated' | 'unchanged'>();
  const order: number[] = [];
  const record = (id: number, what: 'created' | 'updated' | 'unchanged') => {
    if (outcome.has(id)) return;
    outcome.set(id, what);
    order.push(id);
  };
  for (const entry of checked) {
    if (entry.type === 'USER') {
      const key = `user:${entry.userId}`;
      const existing = (await recipientsByKeys(trx, notificationId, [key])).get(key);
      if (existing) record(existing.id, 'unchanged');
      else {
        const row = await insertRecipient(trx, {
          tenant_id: tenantId,
          notification_id: notificationId,
          type: 'USER',
          recipient_key: key,
          user_id: entry.userId,
          embed_user_id: null,
          channel_id: null,
          channel_name: null,
          security_context: null,
          created_at: options.at,
          updated_at: options.at,
        });
        record(row.id, 'created');
      }
      continue;
    }
    const embedTenant = await findEmbedTenant(trx, tenantId, entry.embedTenantName);
    const before = embedTenant && (await findEmbedUserByExternalId(trx, tenantId, embedTenant.id, entry.externalId));
    // Groups and attribute values change only when the entry sends them; otherwise the email alone decides.
    const sendsMemberships = entry.input.groups != null || entry.input.userAttributes != null;
    const stateBefore = before ? (sendsMemberships ? await embedState(trx, tenantId, before.id, before.email) : before.email) : null;
    const provisioned = await provisionEmbedUser(
      trx,
      tenantId,
      {
        embedTenantName: entry.embedTenantName,
        externalId: entry.externalId,
        email: entry.email,
        groups: entry.input.groups,
        userAttributes: entry.input.userAttributes,
      },
      { userLimit: options.userLimit, pointer: `/body/recipients/${entry.index}`, now: () => new Date(options.at) },
    );
    const embedUserId = provisioned.user.id;
    const key = `embed-user:${embedUserId}`;
    const context = entry.input.securityContext == null ? undefined : JSON.stringify(entry.input.securityContext);
    const existing = (await recipientsByKeys(trx, notificationId, [key])).get(key);
    if (!existing) {
      const row = await insertRecipient(trx, {
        tenant_id: tenantId,
        notification_id: notificationId,
        type: 'EMBED_USER',
        recipient_key: key,
        user_id: null,
        embed_user_id: embedUserId,
        channel_id: null,
        channel_name: null,
        security_context: context ?? null,
        created_at: options.at,
        updated_at: options.at,
      });
      record(row.id, 'created');
      continue;
    }
    const contextChanged = context !== undefined && context !== existing.security_context;
    if (contextChanged) await setRecipientSecurityContext(trx, existing.id, context, options.at);
    const stateAfter = sendsMemberships ? await embedState(trx, tenantId, embedUserId, provisioned.user.email) : provisioned.user.email;
    record(existing.id, contextChanged || stateBefore !== stateAfter ? 'updated' : 'unchanged');
  }
  const views = await recipientViewsByIds(trx, tenantId, notificationId, order);
  const pick = (what: 'created' | 'updated' | 'unchanged') =>
    order.filter((id) => outcome.get(id) === what).flatMap((id) => (views.has(id) ? [toRecipient(views.get(id) as RecipientView)] : []));
  return { createdRecipients: pick('created'), updatedRecipients: pick('updated'), unchangedRecipients: pick('unchanged') };
}

/** Removes the recipients named; one that is not subscribed is skipped. */
export async function removeKeys(trx: Executor, tenantId: number, notificationId: number, entries: RemoveRecipientInput[]): Promise<void> {
  const keys: string[] = [];
  const errors: FieldError[] = [];
  for (const [i, entry] of entries.entries()) {
    const at = `/body/recipients/${i}`;
    if (entry.type === 'SLACK') {
      keys.push(`slack:${entry.id}`);
      continue;
    }
    const id = typeof entry.id === 'number' ? entry.id : /^[1-9][0-9]{0,15}$/.test(entry.id) ? Number(entry.id) : null;
    if (id === null) {
      errors.push({ pointer: `${at}/id`, message: `must be the ${entry.type === 'USER' ? 'userId' : 'embedUserId'} (an integer)` });
      continue;
    }
    if (entry.type === 'USER') {
      keys.push(`user:${id}`);
      continue;
    }
    if (entry.embedTenantName == null) {
      errors.push({ pointer: `${at}/embedTenantName`, message: 'is required for EMBED_USER' });
      continue;
    }
    const embedTenant = await findEmbedTenant(trx, tenantId, entry.embedTenantName.toLowerCase());
    if (!embedTenant) continue;
    const user = await findEmbedUserInTenant(trx, tenantId, embedTenant.id, id);
    if (user) keys.push(`embed-user:${user.id}`);
  }
  if (errors.length > 0) throw new ApiError('VALIDATION_FAILED', 'Some recipients to remove are not named correctly; nothing was removed.', { errors });
  await deleteRecipientsByKeys(trx, tenantId, notificationId, keys);
}
