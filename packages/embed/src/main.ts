import './style.css';
import { call, CallFailed } from './api.js';
import { mountChat } from './chat.js';
import { mountComments } from './comments.js';
import { layoutDashboard, type DashboardData, type DashboardControls } from './dashboard.js';
import { el } from './dom.js';
import { formats } from './format.js';
import { EmbedSession, parentOriginOf, SessionEnded } from './session.js';
import { applyTheme } from './theme.js';
import { preloadCharts } from './widgets.js';

/**
 * The embedded dashboard page: `/embed/dashboard/{publicId}?session=<id>&locale=&timezone=`.
 * It takes the session id from its URL once (and removes it from the address), exchanges it for
 * a token held in memory only, reads the dashboard and the session's switches, and draws it.
 */

const app = document.getElementById('app')!;
const body = document.body;

function setStatus(text: string, alert = false): void {
  app.replaceChildren(el('p', { className: alert ? 'status status-ended' : 'status', text, attrs: { role: alert ? 'alert' : 'status' } }));
  app.removeAttribute('aria-busy');
}

function ended(reason: string): void {
  body.dataset.session = 'ended';
  setStatus(reason, true);
}

function allowedOrigins(): string[] {
  const meta = document.querySelector('meta[name="mapi-allowed-origins"]');
  try {
    const parsed = JSON.parse(meta?.getAttribute('content') ?? '[]') as unknown;
    return Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === 'string') : [];
  } catch {
    return [];
  }
}

interface AppConfig {
  embedding?: {
    allowAi?: boolean | null;
    showDashboardChat?: boolean | null;
    enableDashboardComments?: boolean | null;
    locale?: string | null;
    timezone?: string | null;
  } | null;
}

async function start(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const sessionId = params.get('session');
  // The session id is single use: it leaves the address bar and the history at once.
  if (sessionId !== null) {
    params.delete('session');
    const rest = params.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  }
  const publicId = decodeURIComponent(location.pathname.split('/').pop() ?? '');
  if (!sessionId) return ended('This page opens with a session: the embedding site generates one for each viewer.');

  let renewals = 0;
  body.dataset.renewals = '0';
  let session: EmbedSession;
  try {
    session = await EmbedSession.open(sessionId, parentOriginOf(params, document.referrer, allowedOrigins()), {
      onRenewed: (count) => {
        renewals = count;
        body.dataset.renewals = String(renewals);
      },
      onEnded: (reason) => ended(reason),
    });
  } catch (error) {
    return ended(error instanceof SessionEnded ? 'This session has ended' : (error as Error).message);
  }
  body.dataset.session = 'open';

  let dashboard: DashboardData;
  let config: AppConfig;
  try {
    [dashboard, config] = await Promise.all([
      call<DashboardData>(session, `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}`),
      call<AppConfig>(session, '/api/v1/app-config').catch(() => ({}) as AppConfig),
    ]);
  } catch (error) {
    if (error instanceof SessionEnded) return;
    return setStatus(error instanceof CallFailed ? error.message : 'The dashboard could not be loaded.', true);
  }

  preloadCharts(dashboard.reportSnapshots);
  const settings = session.claims.settings;
  const account = config.embedding ?? {};
  const { font } = applyTheme(session.claims.theme);
  const f = formats(
    [params.get('locale'), settings.locale as string | undefined, account.locale],
    [params.get('timezone'), settings.timezone as string | undefined, account.timezone],
  );
  document.documentElement.lang = f.locale;
  const title = dashboard.title ?? dashboard.config.title ?? 'Dashboard';
  document.title = title;

  const controls: DashboardControls = { filters: [], timeGrains: [], memberSwitchers: [] };
  let labels: 'titles' | 'names' = settings.showMemberNames === true ? 'names' : 'titles';
  const content = el('div', { className: 'dashboard' });
  let reports: Array<{ refresh(): Promise<void> }> = [];
  const draw = () => {
    content.replaceChildren();
    reports = layoutDashboard(content, dashboard, {
      session,
      formats: f,
      snapshots: dashboard.reportSnapshots,
      controls,
      labels,
      font,
      onControls: () => void Promise.all(reports.map((r) => r.refresh())),
    }).reports;
    void Promise.all(reports.map((r) => r.refresh()));
  };

  // The header: the title, and the entries the session's switches allow.
  const actions = el('div', { className: 'actions' });
  const panel = el('aside', { className: 'panel', attrs: { hidden: '', 'aria-label': 'Panel' } });
  const openPanel = (name: string, fill: (p: HTMLElement) => void, button: HTMLButtonElement) => {
    const open = panel.hidden || panel.dataset.name !== name;
    for (const b of actions.querySelectorAll('button')) b.setAttribute('aria-expanded', 'false');
    panel.hidden = !open;
    if (!open) return;
    panel.dataset.name = name;
    panel.setAttribute('aria-label', button.textContent ?? name);
    fill(panel);
    button.setAttribute('aria-expanded', 'true');
  };
  const entry = (name: string, text: string, fill: (p: HTMLElement) => void) => {
    const button = el('button', { className: 'button', text, attrs: { type: 'button', 'aria-expanded': 'false', 'data-entry': name } });
    button.addEventListener('click', () => openPanel(name, fill, button));
    actions.append(button);
  };

  if (settings.showDashboardSettings !== false && settings.showMemberNames !== false) {
    entry('settings', 'Settings', (p) => {
      const box = el('input', { attrs: { type: 'checkbox', id: 'member-names' } });
      box.checked = labels === 'names';
      box.addEventListener('change', () => {
        labels = box.checked ? 'names' : 'titles';
        draw();
      });
      p.replaceChildren(
        el('h2', { text: 'Settings' }),
        el('p', {}, box, el('label', { text: ' Show member names instead of titles', attrs: { for: 'member-names' } })),
      );
    });
  }
  const agentId = Number(params.get('agentId') ?? dashboard.config.settings?.agentId);
  // Left open by both, the server decides from the AI settings; it refuses the chat when AI is off.
  const aiAllowed = (settings.allowAi ?? account.allowAi) !== false;
  const chatShown = (settings.showDashboardChat ?? account.showDashboardChat) === true;
  if (aiAllowed && chatShown && Number.isSafeInteger(agentId) && agentId > 0) {
    entry('chat', 'Ask AI', (p) => {
      if (!p.querySelector('.chat-form')) mountChat(p, session, agentId);
    });
  }
  // The account's switch alone: sessions carry no such key (4.15), and the comments API honours only the account's.
  if (account.enableDashboardComments === true) {
    entry('comments', 'Comments', (p) =>
      mountComments(p, {
        publicId,
        call: (path, init) => call(session, path, init),
        locale: f.locale,
        timeZone: f.timeZone,
      }),
    );
  }

  const description = dashboard.description ?? dashboard.config.description ?? null;
  app.replaceChildren(
    el(
      'header',
      { className: 'page-header' },
      el('div', {}, el('h1', { text: title }), description ? el('p', { className: 'muted', text: description }) : null),
      actions,
    ),
    el('div', { className: 'page-body' }, content, panel),
  );
  app.removeAttribute('aria-busy');
  draw();
}

void start().catch((error: unknown) => {
  if (!(error instanceof SessionEnded)) setStatus('The dashboard could not be shown.', true);
});
