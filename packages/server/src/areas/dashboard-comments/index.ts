/**
 * The dashboard-comments area's public entry: what other areas may use of it. Everything else in
 * the folder is the area's own (npm run cycles enforces it).
 */
export { MENTION_MAIL_JOB } from './mention-mail.js';
export { dashboardCommentsArea } from './dashboard-comments.module.js';
