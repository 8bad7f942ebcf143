import type { KoaContextWithOIDC } from 'oidc-provider';

/** Escapes text for HTML (the pages show a client's name and a user code). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A minimal page: the authorization server's screens are forms, not an application. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** The device flow's screens (RFC 8628 section 3.3): enter the code, confirm it, done. */
export const devicePages = {
  userCodeInputSource(ctx: KoaContextWithOIDC, form: string, _out?: unknown, err?: Error & { userCode?: string }) {
    const message = err
      ? err.userCode || err.name === 'NoCodeError'
        ? 'That code is not valid. Try again.'
        : 'The request could not be completed. Try again.'
      : 'Enter the code your device shows.';
    ctx.body = page('Sign in a device', `<p>${escapeHtml(message)}</p>${form}<button type="submit" form="op.deviceInputForm">Continue</button>`);
  },
  userCodeConfirmSource(ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, _deviceInfo: unknown, userCode: string) {
    const name = escapeHtml(client.clientName ?? client.clientId);
    ctx.body = page(
      'Confirm the device',
      `<p><strong>${name}</strong> asks to act as you. Continue only if your device shows <code>${escapeHtml(userCode)}</code>.</p>${form}<button type="submit" form="op.deviceConfirmForm">Continue</button> <button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button>`,
    );
  },
  successSource(ctx: KoaContextWithOIDC) {
    ctx.body = page('Device signed in', '<p>You may close this window and return to your device.</p>');
  },
};
