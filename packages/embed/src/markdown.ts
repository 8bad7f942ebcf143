import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/**
 * A TEXT widget's Markdown as HTML, safe to insert. Raw HTML in the source is dropped (the
 * server's renders drop tags too, so both show the same text), and DOMPurify then sanitises what
 * Markdown made: links and formatting stay; `javascript:` URLs, event handlers, styles and forms
 * go. Dropping raw HTML first also keeps the browser from ever parsing a handler: Chromium reports
 * one as a CSP violation even in the sanitiser's inert document.
 */
const markdown = new Marked({ gfm: true, async: false, renderer: { html: () => '' } });

export function markdownHtml(source: string): string {
  const html = markdown.parse(source) as string;
  return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe'] });
}

/** Links in widget text open outside the iframe. */
export function openLinksOutside(element: HTMLElement): void {
  for (const a of element.querySelectorAll('a[href]')) {
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer');
  }
}
