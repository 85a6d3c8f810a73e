// Splits an agent CLI's stdout into lines across chunk borders and feeds them to the adapter's
// parser, collecting the events it reports.

import type { Adapter, AgentResult, ExitInfo, OutputParser, ProgressEvent } from "./types.ts";

/**
 * Splits a byte stream into lines for a parser: decodes UTF-8 across chunk borders and keeps
 * a partial last line until more bytes or `end` arrive.
 */
export class LineSplitter {
  #decoder = new TextDecoder();
  #rest = "";

  /** Feeds a chunk; returns the complete lines it finished (without `\n` or `\r\n`). */
  push(chunk: Uint8Array): string[] {
    this.#rest += this.#decoder.decode(chunk, { stream: true });
    const parts = this.#rest.split("\n");
    this.#rest = parts.pop() ?? "";
    return parts.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  }

  /** Flushes the last line, if any. */
  end(): string[] {
    const tail = this.#rest + this.#decoder.decode();
    this.#rest = "";
    return tail === "" ? [] : [tail.endsWith("\r") ? tail.slice(0, -1) : tail];
  }
}

/** Feeds chunks of stdout to a parser and collects its events. */
export class StreamingParse {
  readonly #parser: OutputParser;
  readonly #lines = new LineSplitter();

  constructor(parser: OutputParser) {
    this.#parser = parser;
  }

  /** Feeds a chunk; returns the events of the lines it completed. */
  push(chunk: Uint8Array): ProgressEvent[] {
    return this.#lines.push(chunk).flatMap((line) => this.#parser.line(line));
  }

  /** Ends the stream: events of the last partial line and the final result. */
  finish(exit: ExitInfo): { events: ProgressEvent[]; result: AgentResult } {
    const events = this.#lines.end().flatMap((line) => this.#parser.line(line));
    return { events, result: this.#parser.finish(exit) };
  }
}

/** Parses a whole captured stdout with an adapter's parser (tests, post-mortem). */
export function parseOutput(
  adapter: Pick<Adapter, "parser">,
  stdout: string,
  exit: ExitInfo,
): { events: ProgressEvent[]; result: AgentResult } {
  const run = new StreamingParse(adapter.parser());
  const events = run.push(new TextEncoder().encode(stdout));
  const last = run.finish(exit);
  return { events: [...events, ...last.events], result: last.result };
}
