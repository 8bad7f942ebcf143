/**
 * The session's `embedTheme` (reference 4.15) as CSS custom properties on the page's root: set
 * through the CSSOM (never a style attribute or element, which the CSP refuses), and only values
 * that are what they claim to be: a colour the browser parses, a font-family list of names.
 */
const FONT_LIST = /^[\w\s,'"-]{1,200}$/;

export function applyTheme(theme: Record<string, unknown> | null): { font: string } {
  const root = document.documentElement.style;
  const fallback = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  const t = theme ?? {};
  const font = typeof t.font === 'string' && FONT_LIST.test(t.font) ? `${t.font}, ${fallback}` : fallback;
  root.setProperty('--mapi-font', font);
  if (typeof t.primaryColor === 'string' && CSS.supports('color', t.primaryColor)) root.setProperty('--mapi-primary', t.primaryColor);
  const chat = typeof t.chat === 'object' && t.chat !== null ? (t.chat as Record<string, unknown>) : {};
  if (typeof chat.inputColor === 'string' && CSS.supports('color', chat.inputColor)) root.setProperty('--mapi-chat-input', chat.inputColor);
  return { font };
}
