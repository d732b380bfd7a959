/**
 * Incremental Server-Sent Events parsing that keeps each event's raw text, so that an event sluice
 * does not change is forwarded exactly as received.
 */
export interface SseEvent {
  /** The event's lines as received, terminators included (the blank line too). */
  raw: string;
  event: string;
  /** Data lines joined with "\n"; null when the event had no data field. */
  data: string | null;
  id?: string;
}

export class SseParser {
  #buf = "";
  #raw = "";
  #data: string[] | null = null;
  #event = "";
  #id: string | undefined;

  push(text: string, onEvent: (e: SseEvent) => void): void {
    this.#buf += text;
    this.#drain(onEvent, false);
  }

  /** The stream ended: a last event without its blank line is still dispatched. */
  end(onEvent: (e: SseEvent) => void): void {
    this.#drain(onEvent, true);
    if (this.#buf) this.#line(this.#buf, this.#buf, onEvent);
    this.#buf = "";
    if (this.#raw) this.#dispatch(onEvent);
  }

  #drain(onEvent: (e: SseEvent) => void, ended: boolean) {
    const b = this.#buf;
    let at = 0;
    for (;;) {
      let i = at;
      while (i < b.length && b.charCodeAt(i) !== 10 && b.charCodeAt(i) !== 13) i++;
      if (i >= b.length) break;
      let term = 1;
      if (b.charCodeAt(i) === 13) {
        if (i + 1 >= b.length && !ended) break; // a lone \r may be the first half of \r\n
        if (b.charCodeAt(i + 1) === 10) term = 2;
      }
      this.#line(b.slice(at, i), b.slice(at, i + term), onEvent);
      at = i + term;
    }
    this.#buf = at ? b.slice(at) : b;
  }

  #line(line: string, raw: string, onEvent: (e: SseEvent) => void) {
    this.#raw += raw;
    if (line === "") {
      this.#dispatch(onEvent);
      return;
    }
    if (line.startsWith(":")) return;
    const c = line.indexOf(":");
    const name = c === -1 ? line : line.slice(0, c);
    let value = c === -1 ? "" : line.slice(c + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") (this.#data ??= []).push(value);
    else if (name === "event") this.#event = value;
    else if (name === "id" && !value.includes("\u0000")) this.#id = value;
  }

  #dispatch(onEvent: (e: SseEvent) => void) {
    const e: SseEvent = {
      raw: this.#raw,
      event: this.#event,
      data: this.#data ? this.#data.join("\n") : null,
      ...(this.#id !== undefined ? { id: this.#id } : {}),
    };
    this.#raw = "";
    this.#data = null;
    this.#event = "";
    this.#id = undefined;
    onEvent(e);
  }
}

/** An SSE event carrying `data` (one line, as JSON never needs more), keeping the original id and type. */
export function sseEvent(data: string, original?: SseEvent): string {
  let s = "";
  if (original?.event) s += `event: ${original.event}\n`;
  if (original?.id !== undefined) s += `id: ${original.id}\n`;
  return `${s}data: ${data}\n\n`;
}
