import nodemailer from 'nodemailer';

/**
 * Mail through the configured SMTP server (SMTP_*). The password is held in a `Masked` value so
 * that printing or serialising the configuration never shows it.
 */

/** A value that prints and serialises as `********`; `reveal()` gives it back. */
export class Masked {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '********';
  }
  toJSON(): string {
    return '********';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '********';
  }
}

export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (port 465 usually); false: plain, upgraded by STARTTLS when the server offers it. */
  secure: boolean;
  user: string | null;
  password: Masked | null;
  /** The From address of every mail the server sends. */
  from: string;
}

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** Absent: a plain text mail (a scheduled agent task's answer). */
  attachment?: { filename: string; contentType: string; content: Buffer };
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** One pooled SMTP transport for the process; a send that the server refuses rejects with its reply. */
export function createMailer(smtp: SmtpConfig): Mailer {
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    // With credentials, STARTTLS is required, not just tried: a server (or a man in the middle)
    // that does not offer it would otherwise get the password in clear text.
    requireTLS: !smtp.secure && smtp.user !== null,
    pool: true,
    maxConnections: 2,
    ...(smtp.user !== null ? { auth: { user: smtp.user, pass: smtp.password?.reveal() ?? '' } } : {}),
  });
  return {
    async send(mail) {
      // The recipient goes as one mailbox, never as address-list text for nodemailer to parse: a
      // stored address like `x,someone@elsewhere` would otherwise be sent to someone@elsewhere.
      // Subjects and file names are header-encoded by nodemailer (a CR or LF cannot start a header).
      await transport.sendMail({
        from: smtp.from,
        to: { name: '', address: mail.to },
        subject: mail.subject,
        text: mail.text,
        attachments: mail.attachment ? [mail.attachment] : [],
      });
    },
    close() {
      transport.close();
    },
  };
}
