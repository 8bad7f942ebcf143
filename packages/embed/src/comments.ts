import { el, uid } from './dom.js';
import type { CommentDto, MentionableUser, PageInfo, ThreadDto } from './comment-types.js';
import { attachMentions } from './mentions.js';

/**
 * The comments panel (reference 8.C, docs/api/dashboard-comments.md): the open threads of the
 * dashboard, newest first, each with its replies; resolved ones on demand; a form to start a
 * thread and one to reply; edit and delete of one's own comments; resolve and reopen for the
 * thread's starter. The server decides who may do what (`isOwn` only picks the buttons shown), and
 * its refusals show in the panel. Everything is drawn with DOM APIs: comment text is never HTML.
 */
export interface CommentsContext {
  publicId: string;
  /** Calls this server with the session's token (api.ts `call`). */
  call: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  locale: string;
  timeZone: string;
}

const MAX_BODY = 10_000;

export function mountComments(panel: HTMLElement, context: CommentsContext): void {
  const base = `/api/v1/embed/dashboard/${encodeURIComponent(context.publicId)}/comments`;
  const dates = new Intl.DateTimeFormat(context.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: context.timeZone });
  let users: MentionableUser[] = [];
  const names = new Map<number, string>();
  let showResolved = false;
  let threads: ThreadDto[] = [];
  let next: string | null = null;

  const error = el('p', { className: 'comments-error', attrs: { role: 'alert' } });
  const status = el('p', { className: 'muted comments-status', attrs: { role: 'status' } });
  const list = el('ol', { className: 'comment-threads', attrs: { 'aria-label': 'Threads', tabindex: '-1' } });
  const more = el('button', { className: 'link-button', text: 'Show more threads', attrs: { type: 'button' } });
  more.hidden = true;

  const toggleId = uid('show-resolved');
  const toggle = el('input', { attrs: { type: 'checkbox', id: toggleId } });
  toggle.addEventListener('change', () => {
    showResolved = toggle.checked;
    void load();
  });

  const startForm = commentForm('New comment', 'Comment', '', async (body) => {
    await context.call<CommentDto>(base, { method: 'POST', body: { body } });
  });
  panel.replaceChildren(
    el('h2', { text: 'Comments' }),
    startForm.form,
    el('p', { className: 'comments-toggle' }, toggle, el('label', { text: ' Show resolved', attrs: { for: toggleId } })),
    error,
    status,
    list,
    more,
  );
  more.addEventListener('click', () => void load(next));

  /** Runs a change, shows the server's refusal when there is one, and redraws the list after a success. */
  async function act(change: () => Promise<unknown>): Promise<boolean> {
    error.textContent = '';
    try {
      await change();
    } catch (failure) {
      error.textContent = (failure as Error).message;
      return false;
    }
    await load();
    return true;
  }

  async function load(after: string | null = null): Promise<void> {
    const query = new URLSearchParams({ first: '50' });
    if (showResolved) query.set('includeResolved', 'true');
    if (after !== null) query.set('after', after);
    list.setAttribute('aria-busy', 'true');
    try {
      const page = await context.call<{ items: ThreadDto[]; pageInfo: PageInfo }>(`${base}?${query}`);
      threads = after === null ? page.items : [...threads, ...page.items];
      next = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } catch (failure) {
      error.textContent = (failure as Error).message;
      return;
    } finally {
      list.removeAttribute('aria-busy');
    }
    // A redraw may take the focused button away (a resolved thread leaves the list): focus goes to the list.
    const hadFocus = panel.contains(document.activeElement) && !startForm.form.contains(document.activeElement);
    list.replaceChildren(...threads.map(drawThread));
    more.hidden = next === null;
    status.textContent = threads.length === 0 ? (showResolved ? 'No comments yet.' : 'No open threads.') : '';
    if (hadFocus && !panel.contains(document.activeElement)) list.focus();
  }

  function when(iso: string): HTMLElement {
    return el('time', { text: dates.format(new Date(iso)), attrs: { datetime: iso } });
  }

  function drawThread(thread: ThreadDto): HTMLElement {
    const item = el('li', {
      className: thread.resolvedAt ? 'comment-thread comment-thread-resolved' : 'comment-thread',
      attrs: { 'data-thread-id': String(thread.root.id) },
    });
    item.append(drawComment(thread.root));
    if (thread.resolvedAt) item.append(el('p', { className: 'muted comment-resolved' }, document.createTextNode('Resolved '), when(thread.resolvedAt)));
    if (thread.replies.length > 0)
      item.append(el('ol', { className: 'comment-replies', attrs: { 'aria-label': 'Replies' } }, ...thread.replies.map((r) => el('li', {}, drawComment(r)))));
    const actions = el('div', { className: 'comment-actions' });
    if (thread.root.isOwn) {
      const resolved = thread.resolvedAt !== null;
      const button = el('button', {
        className: 'link-button',
        text: resolved ? 'Reopen' : 'Resolve',
        attrs: { type: 'button', 'data-action': resolved ? 'reopen' : 'resolve' },
      });
      button.addEventListener(
        'click',
        () => void act(() => context.call(`${base}/${thread.root.id}/resolve`, { method: 'POST', body: { resolved: !resolved } })),
      );
      actions.append(button);
    }
    if (thread.root.removedAt === null && thread.resolvedAt === null) {
      const reply = commentForm('Reply', 'Reply', '', async (body) => {
        await context.call<CommentDto>(base, { method: 'POST', body: { body, parentId: thread.root.id } });
      });
      reply.form.classList.add('comment-reply-form');
      item.append(reply.form);
    }
    if (actions.childElementCount > 0) item.append(actions);
    return item;
  }

  function drawComment(comment: CommentDto): HTMLElement {
    const article = el('article', { className: 'comment', attrs: { 'data-comment-id': String(comment.id) } });
    const author = comment.isOwn ? 'You' : (names.get(comment.userId) ?? `User ${comment.userId}`);
    const meta = el(
      'p',
      { className: 'comment-meta' },
      el('span', { className: 'comment-author', text: author }),
      document.createTextNode(' · '),
      when(comment.createdAt),
    );
    if (comment.editedAt && !comment.removedAt) meta.append(document.createTextNode(' · edited'));
    article.append(meta);
    if (comment.removedAt) {
      article.append(el('p', { className: 'comment-body comment-removed', text: 'Comment removed' }));
      return article;
    }
    const body = el('p', { className: 'comment-body', text: comment.body });
    article.append(body);
    if (!comment.isOwn) return article;
    const edit = el('button', { className: 'link-button', text: 'Edit', attrs: { type: 'button', 'data-action': 'edit' } });
    const remove = el('button', { className: 'link-button', text: 'Delete', attrs: { type: 'button', 'data-action': 'delete' } });
    const actions = el('div', { className: 'comment-actions' }, edit, remove);
    article.append(actions);
    edit.addEventListener('click', () => {
      const editor = commentForm('Edit comment', 'Save', comment.body, async (text) => {
        await context.call<CommentDto>(`${base}/${comment.id}`, { method: 'PATCH', body: { body: text } });
      });
      const cancel = el('button', { className: 'link-button', text: 'Cancel', attrs: { type: 'button' } });
      cancel.addEventListener('click', () => {
        editor.form.replaceWith(body);
        actions.hidden = false;
        edit.focus();
      });
      editor.form.append(cancel);
      body.replaceWith(editor.form);
      actions.hidden = true;
      editor.input.focus();
    });
    // Two steps: the first press asks, the second removes (the text cannot be brought back from the page).
    remove.addEventListener('click', () => {
      if (remove.dataset.confirm !== 'true') {
        remove.dataset.confirm = 'true';
        remove.textContent = 'Confirm delete';
        return;
      }
      void act(() => context.call(`${base}/${comment.id}`, { method: 'DELETE' }));
    });
    return article;
  }

  /** A labelled text field with the mention helper and a submit button; cleared after the server took it. */
  function commentForm(label: string, submit: string, value: string, send: (body: string) => Promise<void>) {
    const id = uid('comment');
    const input = el('textarea', { attrs: { id, rows: '2', maxlength: String(MAX_BODY) } });
    input.value = value;
    const button = el('button', { className: 'button', text: submit, attrs: { type: 'submit' } });
    const form = el(
      'form',
      { className: 'comment-form' },
      el('label', { text: label, attrs: { for: id } }),
      input,
      attachMentions(input, () => users),
      button,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const body = input.value.trim();
      if (!body) return;
      button.disabled = true;
      void act(() => send(body))
        .then((done) => {
          if (done) input.value = '';
        })
        .finally(() => {
          button.disabled = false;
        });
    });
    return { form, input };
  }

  // Authors are named from the tenant's users (the comments carry ids only); the list also feeds the mention helper.
  void context
    .call<{ items: MentionableUser[] }>(`${base}/mentionable-users?first=200`)
    .then((page) => {
      users = page.items;
      for (const user of users) names.set(user.id, user.firstName || user.username);
    })
    .catch(() => undefined)
    .finally(() => void load());
}
