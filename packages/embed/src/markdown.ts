import DOMPurify from 'dompurify';
import { marked } from 'marked';

/**
 * A TEXT widget's Markdown as HTML, sanitised: DOMPurify keeps formatting and links, drops
 * scripts, event handlers, styles and anything else that could run or restyle the page.
 */
export function markdownHtml(source: string): string {
  const html = marked.parse(source, { async: false, gfm: true }) as string;
  return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe'] });
}

/** Links in widget text open outside the iframe. */
export function openLinksOutside(element: HTMLElement): void {
  for (const a of element.querySelectorAll('a[href]')) {
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer');
  }
}
