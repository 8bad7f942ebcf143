import type { Store } from '../../db/database.js';
import type { Jobs } from '../../jobs/index.js';
import type { Mailer } from '../../mail/index.js';
import type { MentionNotifier } from './dashboard-comments.service.js';
import { realEmail } from './dashboard-comments.service.js';
import { embedUsersById } from './dashboard-comments.store.js';

export const MENTION_MAIL_JOB = 'dashboard-comments.mention-mail';

/** What a queued mention mail names; the comment's text is read when it is sent, so it is never copied into the job. */
interface MentionMailPayload {
  commentId: number;
  userId: number;
  dashboardTitle: string;
  author: string;
}

/** A body is quoted in the mail up to this many characters. */
const QUOTE_MAX = 2_000;

/**
 * Mention mails as jobs of the jobs service, one per mentioned user, so a mail server that is
 * down or refuses one address delays or fails that mail alone (three attempts), never the
 * comment that mentioned them. A comment removed before its mail went out is not mailed.
 */
export function mentionMail(store: Store, jobs: Jobs, mailer: Mailer): MentionNotifier {
  jobs.register<MentionMailPayload, { status: string }>({
    kind: MENTION_MAIL_JOB,
    maxAttempts: 3,
    timeoutMs: 60_000,
    async run({ tenantId, payload }) {
      const comment = await store.db
        .selectFrom('dashboard_comments')
        .select(['body', 'removed_at'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', payload.commentId)
        .executeTakeFirst();
      if (!comment || comment.removed_at !== null) return { status: 'removed' };
      const [user] = await embedUsersById(store.db, tenantId, [payload.userId]);
      const to = user ? realEmail(user.email) : null;
      if (to === null) return { status: 'no-address' };
      const quoted = comment.body.length > QUOTE_MAX ? `${comment.body.slice(0, QUOTE_MAX)}…` : comment.body;
      await mailer.send({
        to,
        subject: `${payload.author} mentioned you on “${payload.dashboardTitle}”`,
        text: `${payload.author} mentioned you in a comment on the dashboard “${payload.dashboardTitle}”:\n\n${quoted}\n`,
      });
      return { status: 'sent' };
    },
  });
  return async (tenantId, mention) => {
    // A process whose worker starts on demand (AppOptions.startJobs) starts it with its first job.
    await jobs.start();
    await jobs.enqueue<MentionMailPayload>(tenantId, MENTION_MAIL_JOB, mention);
  };
}
