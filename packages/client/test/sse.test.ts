import { describe, expect, it } from 'vitest';
import { readServerSentEvents, SseParser, type ServerSentEvent } from '../src/index.js';

/** The text/event-stream parser behind `chat`: the standard's rules, with chunks split anywhere. */

const STREAM =
  '\uFEFF: a comment, then a thread\r\n' +
  'event: thread\r\ndata: {"threadId":"t1","seq":1}\r\n\r\n' +
  'event:text\ndata:{"delta":"Héllo"}\n\n' +
  'event: text\rdata: {"delta":" wörld"}\r\r' +
  'data: first\ndata: second\nid: 7\nretry: 1500\n\n' +
  'event: nothing\n\n' +
  'field-without-colon\nevent: done\ndata\n\n' +
  'event: cut\ndata: never dispatched';

const EXPECTED: ServerSentEvent[] = [
  { event: 'thread', data: '{"threadId":"t1","seq":1}', id: '' },
  { event: 'text', data: '{"delta":"Héllo"}', id: '' },
  { event: 'text', data: '{"delta":" wörld"}', id: '' },
  { event: 'message', data: 'first\nsecond', id: '7', retry: 1500 },
  { event: 'done', data: '', id: '7' },
];

function parseAll(chunks: string[]): ServerSentEvent[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

function bytesStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function collect(body: ReadableStream<Uint8Array>): Promise<ServerSentEvent[]> {
  const out: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(body)) out.push(event);
  return out;
}

describe('SseParser', () => {
  it('dispatches on blank lines with CRLF, LF and CR line ends; drops comments, empty events and an unfinished last one', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same events however the text is split, including between a CR and its LF', () => {
    for (let size = 1; size <= 7; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < STREAM.length; i += size) chunks.push(STREAM.slice(i, i + size));
      expect(parseAll(chunks), `chunks of ${size}`).toEqual(EXPECTED);
    }
    // Every two-way split: the CRs of the third event and the BOM land on every boundary.
    for (let cut = 0; cut <= STREAM.length; cut++) expect(parseAll([STREAM.slice(0, cut), '', STREAM.slice(cut)])).toEqual(EXPECTED);
  });

  it('strips one space after the colon only, and keeps colons in the value', () => {
    expect(parseAll(['data:  two spaces\n\ndata: a: b\n\n'])).toEqual([
      { event: 'message', data: ' two spaces', id: '' },
      { event: 'message', data: 'a: b', id: '' },
    ]);
  });
});

describe('readServerSentEvents', () => {
  it('decodes UTF-8 split inside a character and between chunks', async () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (const size of [1, 2, 3, 5, 64]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
      expect(await collect(bytesStream(chunks)), `chunks of ${size} bytes`).toEqual(EXPECTED);
    }
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: tick\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    let count = 0;
    for await (const event of readServerSentEvents(body)) {
      expect(event.data).toBe('tick');
      if (++count === 3) break;
    }
    expect(cancelled).toBe(true);
  });
});
