// An agent's output on its way to its session log and its adapter's parser: redacted first, stdout
// split into lines for the parser. A log that cannot be written (the disk filled up) never stops
// the output being read: an agent blocked on a full pipe would hang, and a throw inside the
// process's stream reader would end the whole run as an unhandled rejection.
import type { Adapter, ProgressEvent } from "../adapters/mod.ts";
import { type RedactingStream, type SecretRedactor, writeAllSync } from "../io/mod.ts";

/** Where the output is logged: an open file (`Deno.FsFile`), or a fake in tests. */
export interface SessionLog {
  writeSync(p: Uint8Array): number;
  close(): void;
}

/** An agent's stdout and stderr, redacted, logged, and stdout's lines fed to the parser. */
export class AgentOutput {
  readonly #log: SessionLog;
  readonly #parser: ReturnType<Adapter["parser"]>;
  readonly #onEvent: (event: ProgressEvent) => void;
  readonly #out: RedactingStream | undefined;
  readonly #err: RedactingStream | undefined;
  readonly #decoder = new TextDecoder();
  #pending = "";
  #logFailure: Error | undefined;

  constructor(
    log: SessionLog,
    parser: ReturnType<Adapter["parser"]>,
    redactor: SecretRedactor | undefined,
    onEvent: (event: ProgressEvent) => void,
  ) {
    this.#log = log;
    this.#parser = parser;
    this.#onEvent = onEvent;
    this.#out = redactor?.stream();
    this.#err = redactor?.stream();
  }

  /** A chunk of stdout. */
  stdout(chunk: Uint8Array): void {
    this.#lines(this.#out === undefined ? chunk : this.#out.push(chunk));
  }

  /** A chunk of stderr. */
  stderr(chunk: Uint8Array): void {
    this.#write(this.#err === undefined ? chunk : this.#err.push(chunk));
  }

  /**
   * The first write to the session log that failed (disk full, read-only), or undefined. From
   * then on the log is not written, but the output is still read (an agent blocked on a full
   * pipe would hang) and parsed; the agent's result reports the failure.
   */
  get logFailure(): Error | undefined {
    return this.#logFailure;
  }

  /** At exit: what the redacting streams held back (a possible secret's first bytes), the
   * last unterminated line, then the log closes. */
  finish(): void {
    if (this.#out !== undefined) this.#lines(this.#out.end());
    if (this.#err !== undefined) this.#write(this.#err.end());
    if (this.#pending !== "") this.#feed(this.#pending);
    this.close();
  }

  /** Closes the log. */
  close(): void {
    this.#log.close();
  }

  #write(chunk: Uint8Array): void {
    if (this.#logFailure !== undefined) return;
    try {
      writeAllSync(this.#log, chunk);
    } catch (error) {
      this.#logFailure = error instanceof Error ? error : new Error(String(error));
    }
  }

  #lines(chunk: Uint8Array): void {
    this.#write(chunk);
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.#pending.indexOf("\n")) >= 0) {
      this.#feed(this.#pending.slice(0, nl).replace(/\r$/, ""));
      this.#pending = this.#pending.slice(nl + 1);
    }
  }

  #feed(line: string): void {
    for (const event of this.#parser.line(line)) this.#onEvent(event);
  }
}
