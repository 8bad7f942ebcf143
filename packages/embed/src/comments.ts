/**
 * The comments panel's hook (reference 8.C: `GET`/`POST /api/v1/embed/dashboard/{publicId}/comments`).
 * The page shows the comments entry when the session's `enableDashboardComments` is on and calls
 * this with the panel's element; the panel itself is wired here once the comments API exists.
 */
export interface CommentsContext {
  publicId: string;
  /** Calls this server with the session's token (api.ts `call`). */
  call: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  locale: string;
  timeZone: string;
}

export function mountComments(panel: HTMLElement, _context: CommentsContext): void {
  const note = document.createElement('p');
  note.className = 'muted';
  note.textContent = 'Comments are not available yet.';
  panel.replaceChildren(note);
}
