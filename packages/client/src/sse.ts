/**
 * Server-sent events (the HTML standard's `text/event-stream`), parsed from a byte stream: standard
 * web streams and TextDecoder only, so the universal entry keeps working in browsers.
 */

/** One dispatched event: its `event:` name ("message" when it has none) and its `data:` lines joined. */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The last `id:` seen, carried over from earlier events as the standard says; '' when none. */
  id: string;
  /** A `retry:` value sent with this event, in milliseconds. */
  retry?: number;
}

/**
 * Incremental parser: feed it text as it arrives, in chunks split anywhere (mid-line, between a CR
 * and its LF), and it returns the events each chunk completes. An event is dispatched by a blank
 * line; one left without its blank line when the stream ends is dropped, as the standard says.
 */
export class SseParser {
  private buffer = '';
  private started = false;
  /** A CR ended the previous chunk: an LF opening the next one belongs to it. */
  private afterCr = false;
  private event = '';
  private data: string[] = [];
  private lastId = '';
  private retry: number | undefined;

  push(text: string): ServerSentEvent[] {
    if (text === '') return [];
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = false;
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const char = this.buffer[i];
      if (char !== '\n' && char !== '\r') continue;
      const line = this.buffer.slice(start, i);
      if (char === '\r') {
        if (i + 1 === this.buffer.length) this.afterCr = true;
        else if (this.buffer[i + 1] === '\n') i++;
      }
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const event = this.event;
    const data = this.data;
    const retry = this.retry;
    this.event = '';
    this.data = [];
    this.retry = undefined;
    // An event without data lines is not dispatched (the standard's "data buffer is empty").
    if (data.length === 0) return undefined;
    return { event: event === '' ? 'message' : event, data: data.join('\n'), id: this.lastId, ...(retry !== undefined ? { retry } : {}) };
  }
}

/**
 * The events of a `text/event-stream` body, as they arrive. Reads with a reader rather than async
 * iteration of the stream, which not every browser has; stopping the iteration cancels the body.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        yield* parser.push(decoder.decode());
        return;
      }
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
