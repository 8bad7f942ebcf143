import { el } from './dom.js';
import type { MentionableUser } from './comment-types.js';

/** How a body names a user (docs/api/dashboard-comments.md, Mentions): braces when the name has spaces or ends in punctuation. */
export function mentionOf(username: string): string {
  return /\s/.test(username) || /[.,;:!?)\]}]$/.test(username) ? `@{${username}}` : `@${username}`;
}

/** The partial name typed after an `@` right before the caret, where a mention may start; null when none. */
export function mentionQuery(text: string, caret: number): { start: number; query: string } | null {
  const match = /(^|[\s([{])@(\{[^}]*|[^\s@]*)$/.exec(text.slice(0, caret));
  if (!match) return null;
  const start = caret - match[2]!.length - 1;
  return { start, query: match[2]!.replace(/^\{/, '').toLowerCase() };
}

/**
 * The mention helper under a comment field: while the text before the caret ends in `@name`, the
 * users whose username or display name contains `name` are offered as buttons; one inserts
 * `@username `. The list of users is read once per panel.
 */
export function attachMentions(input: HTMLTextAreaElement, users: () => readonly MentionableUser[]): HTMLElement {
  const list = el('ul', { className: 'mention-suggestions', attrs: { 'aria-label': 'Mention a user' } });
  list.hidden = true;
  const update = () => {
    const found = mentionQuery(input.value, input.selectionStart ?? input.value.length);
    const matches =
      found === null
        ? []
        : users()
            .filter((u) => u.username.toLowerCase().includes(found.query) || (u.firstName ?? '').toLowerCase().includes(found.query))
            .slice(0, 6);
    list.replaceChildren(
      ...matches.map((user) => {
        const label = user.firstName && user.firstName !== user.username ? `${user.firstName} (@${user.username})` : `@${user.username}`;
        const button = el('button', { className: 'link-button', text: label, attrs: { type: 'button' } });
        button.addEventListener('click', () => {
          const caret = input.selectionStart ?? input.value.length;
          const at = mentionQuery(input.value, caret);
          if (at === null) return;
          const inserted = `${mentionOf(user.username)} `;
          input.value = input.value.slice(0, at.start) + inserted + input.value.slice(caret);
          const next = at.start + inserted.length;
          input.focus();
          input.setSelectionRange(next, next);
          update();
        });
        return el('li', {}, button);
      }),
    );
    list.hidden = matches.length === 0;
  };
  input.addEventListener('input', update);
  input.addEventListener('click', update);
  return list;
}
