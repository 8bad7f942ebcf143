import { el, uid } from './dom.js';
import type { EmbedSession } from './session.js';

/**
 * The dashboard chat: a question to the deployment's agent (`POST …/agents/{agentId}/threads`,
 * then `…/threads/{threadId}/messages` for follow-ups) with the embed token, the answer's text
 * streamed as it arrives (Server-Sent Events `text` deltas). Shown only when the session allows AI
 * and dashboard chat, and an agent is named (the dashboard's `config.settings.agentId` or the
 * `agentId` URL parameter).
 */
export function mountChat(panel: HTMLElement, session: EmbedSession, agentId: number): void {
  const log = el('div', { className: 'chat-log', attrs: { 'aria-live': 'polite' } });
  const inputId = uid('chat');
  const input = el('textarea', { attrs: { id: inputId, rows: '2', maxlength: '4000' } });
  const send = el('button', { className: 'button', text: 'Ask', attrs: { type: 'submit' } });
  const form = el('form', { className: 'chat-form' }, el('label', { text: 'Ask about this dashboard', attrs: { for: inputId } }), input, send);
  panel.replaceChildren(log, form);
  let threadId: string | null = null;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question) return;
    input.value = '';
    log.append(el('p', { className: 'chat-question', text: question }));
    const answer = el('p', { className: 'chat-answer', text: '…' });
    log.append(answer);
    send.disabled = true;
    void ask(question, answer).finally(() => {
      send.disabled = false;
    });
  });

  async function ask(question: string, answer: HTMLElement): Promise<void> {
    const { deployment_id: deploymentId } = session.claims;
    const path =
      threadId === null
        ? `/api/v1/deployments/${deploymentId}/agents/${agentId}/threads`
        : `/api/v1/deployments/${deploymentId}/agents/${agentId}/threads/${encodeURIComponent(threadId)}/messages`;
    try {
      const res = await fetch(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${await session.bearer()}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ question }),
        credentials: 'omit',
      });
      if (res.status === 401) throw session.end();
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => null)) as { detail?: string } | null;
        answer.textContent = body?.detail ?? `The question could not be answered (${res.status}).`;
        return;
      }
      answer.textContent = '';
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!event || data === undefined) continue;
          const parsed = JSON.parse(data) as Record<string, unknown>;
          if (event === 'thread' && typeof parsed.threadId === 'string') threadId = parsed.threadId;
          else if (event === 'text' && typeof parsed.delta === 'string') answer.textContent += parsed.delta;
          else if (event === 'error') answer.textContent = typeof parsed.detail === 'string' ? parsed.detail : 'The answer failed.';
        }
      }
    } catch (error) {
      answer.textContent = (error as Error).message;
    }
  }
}
