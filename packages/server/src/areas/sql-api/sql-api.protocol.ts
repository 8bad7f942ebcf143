/**
 * The PostgreSQL wire protocol's messages after start-up (protocol 3.0), read from the client and
 * written to it. Start-up, TLS and the password exchange are pg-gateway's; this file covers the
 * simple and extended query protocols the SQL API answers itself.
 */

/** A frontend message: its type byte and its body (without the length). */
export interface Message {
  type: string;
  body: Buffer;
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  byte(): string {
    return String.fromCharCode(this.buf[this.at++] ?? 0);
  }
  int16(): number {
    const v = this.buf.readInt16BE(this.at);
    this.at += 2;
    return v;
  }
  int32(): number {
    const v = this.buf.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  cstring(): string {
    const end = this.buf.indexOf(0, this.at);
    if (end === -1) throw new Error('unterminated string in message');
    const s = this.buf.toString('utf8', this.at, end);
    this.at = end + 1;
    return s;
  }
  bytes(n: number): Buffer {
    const b = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return b;
  }
}

export function readMessage(data: Uint8Array): Message {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return { type: String.fromCharCode(buf[0] ?? 0), body: buf.subarray(5) };
}

/** Splits a stream of backend messages (PGlite's answer) into messages. */
export function splitMessages(data: Uint8Array): Message[] {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out: Message[] = [];
  let at = 0;
  while (at + 5 <= buf.length) {
    const len = buf.readInt32BE(at + 1);
    out.push({ type: String.fromCharCode(buf[at]!), body: buf.subarray(at + 5, at + 1 + len) });
    at += 1 + len;
  }
  return out;
}

export const readQuery = (m: Message) => new Reader(m.body).cstring();

export interface Parse {
  name: string;
  sql: string;
  paramTypes: number[];
}
export function readParse(m: Message): Parse {
  const r = new Reader(m.body);
  const name = r.cstring();
  const sql = r.cstring();
  const n = r.int16();
  const paramTypes: number[] = [];
  for (let i = 0; i < n; i++) paramTypes.push(r.int32());
  return { name, sql, paramTypes };
}

export interface Bind {
  portal: string;
  statement: string;
  paramFormats: number[];
  params: Array<Buffer | null>;
  resultFormats: number[];
}
export function readBind(m: Message): Bind {
  const r = new Reader(m.body);
  const portal = r.cstring();
  const statement = r.cstring();
  const nf = r.int16();
  const paramFormats: number[] = [];
  for (let i = 0; i < nf; i++) paramFormats.push(r.int16());
  const np = r.int16();
  const params: Array<Buffer | null> = [];
  for (let i = 0; i < np; i++) {
    const len = r.int32();
    params.push(len === -1 ? null : Buffer.from(r.bytes(len)));
  }
  const nr = r.int16();
  const resultFormats: number[] = [];
  for (let i = 0; i < nr; i++) resultFormats.push(r.int16());
  return { portal, statement, paramFormats, params, resultFormats };
}

/** Describe and Close: 'S' (statement) or 'P' (portal), and its name. */
export function readTarget(m: Message): { kind: string; name: string } {
  const r = new Reader(m.body);
  return { kind: r.byte(), name: r.cstring() };
}

export function readExecute(m: Message): { portal: string; maxRows: number } {
  const r = new Reader(m.body);
  return { portal: r.cstring(), maxRows: r.int32() };
}

// ---- backend messages ----

function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** Writes a frontend message (for PGlite, which speaks the protocol as a server). */
export const frontend = {
  query: (sql: string) => message('Q', cstr(sql)),
  parse: (p: Parse) => message('P', cstr(p.name), cstr(p.sql), i16(p.paramTypes.length), ...p.paramTypes.map(i32)),
  bind: (b: Bind) =>
    message(
      'B',
      cstr(b.portal),
      cstr(b.statement),
      i16(b.paramFormats.length),
      ...b.paramFormats.map(i16),
      i16(b.params.length),
      ...b.params.flatMap((p) => (p === null ? [i32(-1)] : [i32(p.length), p])),
      i16(b.resultFormats.length),
      ...b.resultFormats.map(i16),
    ),
  describe: (kind: 'S' | 'P', name: string) => message('D', Buffer.from(kind, 'latin1'), cstr(name)),
  execute: (portal: string) => message('E', cstr(portal), i32(0)),
  sync: () => message('S'),
};

export interface Field {
  name: string;
  oid: number;
}

export const backend = {
  raw: (m: Message) => message(m.type, m.body),
  parseComplete: () => message('1'),
  bindComplete: () => message('2'),
  closeComplete: () => message('3'),
  noData: () => message('n'),
  portalSuspended: () => message('s'),
  emptyQuery: () => message('I'),
  ready: (status: 'I' | 'T' | 'E' = 'I') => message('Z', Buffer.from(status, 'latin1')),
  parameterStatus: (name: string, value: string) => message('S', cstr(name), cstr(value)),
  commandComplete: (tag: string) => message('C', cstr(tag)),
  parameterDescription: (oids: number[]) => message('t', i16(oids.length), ...oids.map(i32)),
  rowDescription: (fields: Field[]) =>
    message(
      'T',
      i16(fields.length),
      ...fields.map((f) =>
        Buffer.concat([
          cstr(f.name),
          i32(0),
          i16(0),
          i32(f.oid),
          i16(f.oid === 20 ? 8 : f.oid === 16 ? 1 : f.oid === 701 ? 8 : f.oid === 1114 ? 8 : -1),
          i32(-1),
          i16(0),
        ]),
      ),
    ),
  dataRow: (values: Array<string | null>) =>
    message(
      'D',
      i16(values.length),
      ...values.flatMap((v) => {
        if (v === null) return [i32(-1)];
        const b = Buffer.from(v, 'utf8');
        return [i32(b.length), b];
      }),
    ),
  error: (code: string, text: string, severity: 'ERROR' | 'FATAL' = 'ERROR', detail?: string) =>
    message(
      'E',
      Buffer.from('S', 'latin1'),
      cstr(severity),
      Buffer.from('V', 'latin1'),
      cstr(severity),
      Buffer.from('C', 'latin1'),
      cstr(code),
      Buffer.from('M', 'latin1'),
      cstr(text),
      ...(detail === undefined ? [] : [Buffer.from('D', 'latin1'), cstr(detail)]),
      Buffer.from([0]),
    ),
};
