import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, type Mailer } from '../src/mail/index.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';

/*
 * docs/security.md, "SMTP settings": what a user can put into a mail (a stored recipient address,
 * a dashboard title as subject and file name) stays inside its own header and goes to no one else.
 */

describe('mail to a recipient', () => {
  let smtp: TestSmtp;
  let mailer: Mailer;
  beforeAll(async () => {
    smtp = await startSmtp();
    mailer = createMailer({ host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' });
  });
  afterAll(async () => {
    mailer.close();
    await smtp.close();
  });

  const attachment = { filename: 'report.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF') };

  it('sends to the stored address as one mailbox: a comma or group in it reaches no other address', async () => {
    for (const to of ['x,attacker@evil.example', 'list: attacker@evil.example;']) {
      await mailer.send({ to, subject: 'Weekly', text: 'attached', attachment }).catch(() => undefined);
    }
    expect(smtp.tried).not.toContain('attacker@evil.example');
    expect(smtp.received.flatMap((r) => r.to)).not.toContain('attacker@evil.example');
  });

  it('keeps a title with CR/LF inside the Subject and the file name: no header of its own, no extra recipient', async () => {
    const before = smtp.received.length;
    const title = 'Sales\r\nBcc: attacker@evil.example\r\nX-Injected: 1';
    await mailer.send({ to: 'ana@example.com', subject: title, text: 'attached', attachment: { ...attachment, filename: `${title}.pdf` } });
    const [got] = smtp.received.slice(before);
    expect(got?.to).toEqual(['ana@example.com']);
    expect(got?.mail.headers.has('x-injected')).toBe(false);
    expect(got?.mail.bcc).toBeUndefined();
    expect(got?.mail.subject).toBe('Sales Bcc: attacker@evil.example X-Injected: 1');
  });
});
