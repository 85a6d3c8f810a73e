// One run-long `git cat-file --batch` for the object reads of a run's gates and merges (a blob
// at a commit, a commit's bytes, a tree), instead of a git process (and its setsid) for each
// read: five processes fewer per task. It is a shortcut, never a second opinion: it answers
// only an object of the type asked for whose bytes hash to the id git resolved (what `git
// show` checks on a blob), and anything else — missing, another type, a hash mismatch, a name the line protocol
// cannot carry, a batch that died or hangs — is `undefined`, and Git then runs the per-call
// command it always ran, whose answer (or error) stands.

import { gitObjectIdHex } from "../crypto/mod.ts";
import { concatBytes } from "../canonical/mod.ts";

/** A full object id: 40 hex digits (SHA-1) or 64 (SHA-256), lowercase as git prints them. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The batch's input line for `commit` alone or `commit:path`, or undefined when the batch cannot
 * name it exactly as `git show`/`git cat-file` would: the commit must be a full id (no ref, no
 * revision syntax), and the path must hold no line break (the batch reads lines, and drops a
 * CR before the LF).
 */
export function batchName(commit: string, path?: string): string | undefined {
  if (!OBJECT_ID.test(commit)) return undefined;
  if (path === undefined) return commit;
  if (path === "" || /[\n\r\0]/.test(path)) return undefined;
  return `${commit}:${path}`;
}

/**
 * The batch's input line for the commit a ref names (`<ref>^{commit}`, as `git rev-parse
 * --verify` is asked), or undefined for anything but a plain ref name: letters, digits and
 * `._/+-`, no revision syntax (`^ ~ : @{ ..`), not starting with `-` or `.`.
 */
export function batchRefName(ref: string): string | undefined {
  if (!/^[A-Za-z0-9_+-][A-Za-z0-9._/+-]*$/.test(ref) || ref.includes("..")) return undefined;
  return `${ref}^{commit}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Starts the batch process: `git … cat-file --batch` with piped stdin and stdout. */
export type StartBatch = () => Deno.ChildProcess;

/** The running batch process and the ends of its pipes. */
interface BatchIo {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
}

/** One `git cat-file --batch` process, its reads one at a time. */
export class GitObjectBatch {
  readonly #start: StartBatch;
  readonly #timeoutMs: number;
  /** The process and its pipes, once started. */
  #io: BatchIo | undefined;
  /** Bytes read from stdout and not yet consumed. */
  #pending: Uint8Array = new Uint8Array(0);
  /** The tail of the read queue. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Out of step or dead: every read is `undefined` from now on (the per-call path answers). */
  #broken = false;
  #closed = false;

  /** `start` is called at the first read; a read slower than `timeoutMs` breaks the batch. */
  constructor(start: StartBatch, timeoutMs: number) {
    this.#start = start;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * The object `name` (see {@linkcode batchName}) if it is a `type` whose bytes hash to the id
   * git resolved; undefined otherwise (the caller asks git the old way).
   */
  async read(name: string, type: "blob" | "commit" | "tree"): Promise<Uint8Array | undefined> {
    return (await this.readObject(name, type))?.bytes;
  }

  /** Like {@linkcode GitObjectBatch.read}, with the object's id (the hash its bytes were checked against). */
  readObject(
    name: string,
    type: "blob" | "commit" | "tree",
  ): Promise<{ id: string; bytes: Uint8Array } | undefined> {
    const next = this.#queue.then(() => this.#readNow(name, type));
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Ends the process (its stdin closed, then waited for). Reads after this are undefined. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue;
    await this.#stop();
  }

  async #readNow(
    name: string,
    type: string,
  ): Promise<{ id: string; bytes: Uint8Array } | undefined> {
    if (this.#broken || this.#closed || /[\n\r\0]/.test(name)) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), this.#timeoutMs);
    });
    try {
      const answer = await Promise.race([this.#exchange(name), late]);
      if (answer === "late") throw new Error("git cat-file --batch did not answer in time");
      if (answer === undefined || answer.type !== type) return undefined;
      const algorithm = answer.id.length === 40 ? "sha1" : "sha256";
      return gitObjectIdHex(answer.type, answer.bytes, algorithm) === answer.id
        ? { id: answer.id, bytes: answer.bytes }
        : undefined;
    } catch {
      // Out of step with the process (or it is gone): the per-call commands answer from now on.
      this.#broken = true;
      await this.#stop();
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes one name and reads its answer: the object, or undefined for `missing`/`ambiguous`. */
  async #exchange(
    name: string,
  ): Promise<{ id: string; type: string; bytes: Uint8Array } | undefined> {
    const io = this.#io ??= this.#open();
    await io.writer.write(encoder.encode(`${name}\n`));
    const header = decoder.decode(await this.#readLine(io));
    const fields = header.split(" ");
    if (fields.length !== 3 || !OBJECT_ID.test(fields[0])) {
      // `<name> missing` / `<name> ambiguous`: nothing follows the line.
      if (header === `${name} missing` || header === `${name} ambiguous`) return undefined;
      throw new Error(`git cat-file --batch: unexpected answer ${JSON.stringify(header)}`);
    }
    const [id, type, sizeText] = fields;
    if (!/^[0-9]{1,15}$/.test(sizeText)) throw new Error(`git cat-file --batch: size ${sizeText}`);
    const bytes = await this.#readExactly(io, Number(sizeText) + 1);
    if (bytes[bytes.length - 1] !== 0x0a) throw new Error("git cat-file --batch: no line end");
    return { id, type, bytes: bytes.subarray(0, bytes.length - 1) };
  }

  #open(): BatchIo {
    const child = this.#start();
    return { child, writer: child.stdin.getWriter(), reader: child.stdout.getReader() };
  }

  /** The next line of stdout, without its LF. */
  async #readLine(io: BatchIo): Promise<Uint8Array> {
    for (;;) {
      const lf = this.#pending.indexOf(0x0a);
      if (lf >= 0) {
        const line = this.#pending.subarray(0, lf);
        this.#pending = this.#pending.subarray(lf + 1);
        return line;
      }
      await this.#more(io);
    }
  }

  /** The next `n` bytes of stdout. */
  async #readExactly(io: BatchIo, n: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let have = 0;
    while (have < n) {
      if (this.#pending.length === 0) await this.#more(io);
      const take = this.#pending.subarray(0, n - have);
      parts.push(take);
      have += take.length;
      this.#pending = this.#pending.subarray(take.length);
    }
    return concatBytes(parts, n);
  }

  /** Reads one more chunk of stdout into the pending bytes; throws at its end. */
  async #more(io: BatchIo): Promise<void> {
    const { value, done } = await io.reader.read();
    if (done) throw new Error("git cat-file --batch ended");
    this.#pending = this.#pending.length === 0 ? value : concatBytes([this.#pending, value]);
  }

  async #stop(): Promise<void> {
    const io = this.#io;
    if (io === undefined) return;
    this.#io = undefined;
    await io.writer.close().catch(() => {});
    if (this.#broken) {
      try {
        io.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await io.reader.cancel().catch(() => {});
    await io.child.status.catch(() => {});
  }
}
