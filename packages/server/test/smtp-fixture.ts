import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A mail the test SMTP server accepted: its envelope recipients and the parsed message. */
export interface ReceivedMail {
  to: string[];
  mail: ParsedMail;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  /** Recipients whose RCPT TO is refused: as many times as the number says (Infinity: always). */
  refuse: Map<string, number>;
  /** Every RCPT TO tried, accepted or not. */
  tried: string[];
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (no TLS, no sign-in) that keeps every mail it accepts. */
export async function startSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const refuse = new Map<string, number>();
  const tried: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      tried.push(address.address);
      const left = refuse.get(address.address) ?? 0;
      if (left > 0) {
        refuse.set(address.address, left - 1);
        const error = Object.assign(new Error(`Mailbox ${address.address} is unavailable`), { responseCode: 550 });
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), mail });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, refuse, tried, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
