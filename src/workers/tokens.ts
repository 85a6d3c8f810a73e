/**
 * Worker tokens: one bearer token per worker name, minted on the orchestrator's host by
 * `bernstein workers token NAME` and copied to the worker's host. Only its SHA-256 digest is
 * kept, in `.sdd/workers/<name>.json` (mode 0600); it outlives runs, and `workers revoke NAME`
 * deletes it. A worker token can register, heartbeat, poll, report and use the git endpoint
 * under its own name — nothing else: the task server's own routes do not know it.
 */
import { join } from "node:path";
import { z } from "zod";
import { fromHex, parseJson, toBase64Url, toHex } from "../canonical/mod.ts";
import { sha256, timingSafeEqualBytes } from "../crypto/mod.ts";
import { UsageError } from "../errors/mod.ts";
import { type Random, readFileIfExists, sddFolder, writeFileAtomic } from "../io/mod.ts";
import { WORKER_NAME } from "./protocol.ts";

const DigestFile = z.object({
  v: z.literal(1),
  name: z.string().regex(WORKER_NAME),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  created_at: z.string(),
}).strict();

const encoder = new TextEncoder();

/** `.sdd/workers/`. */
export function workersDir(sdd: string): string {
  return sddFolder(sdd, "workers");
}

function checkName(name: string): void {
  if (!WORKER_NAME.test(name)) {
    throw new UsageError(
      "workers.bad_name",
      `worker name '${name}' must be 1-63 characters of A-Z a-z 0-9 . _ - starting with a letter or digit`,
      { location: "NAME" },
    );
  }
}

/**
 * Mints (or replaces) the token of worker `name`; the secret is returned once and never stored.
 *
 * @example
 * ```ts ignore
 * const { token } = await mintWorkerToken(".sdd", "build-2", systemRandom, new Date());
 * await Deno.writeTextFile("worker.token", token, { mode: 0o600 });
 * ```
 */
export async function mintWorkerToken(
  sdd: string,
  name: string,
  random: Random,
  now: Date,
): Promise<{ token: string; digestPath: string }> {
  checkName(name);
  const token = `bwk_${toBase64Url(random.bytes(32))}`;
  const digestPath = join(workersDir(sdd), `${name}.json`);
  await Deno.mkdir(workersDir(sdd), { recursive: true, mode: 0o700 });
  const body = {
    v: 1,
    name,
    sha256: toHex(sha256(encoder.encode(token))),
    created_at: now.toISOString(),
  };
  await writeFileAtomic(digestPath, JSON.stringify(body) + "\n", { mode: 0o600 });
  return { token, digestPath };
}

/** Deletes the token of worker `name`; false when it had none. */
export async function revokeWorkerToken(sdd: string, name: string): Promise<boolean> {
  checkName(name);
  try {
    await Deno.remove(join(workersDir(sdd), `${name}.json`));
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The worker tokens known to this project, by digest. */
export class WorkerTokens {
  readonly #sdd: string;
  #byDigest = new Map<string, { name: string; digest: Uint8Array }>();
  #loadedMtime: number | null | undefined;

  private constructor(sdd: string) {
    this.#sdd = sdd;
  }

  /** Reads `.sdd/workers/*.json`. */
  static async open(sdd: string): Promise<WorkerTokens> {
    const tokens = new WorkerTokens(sdd);
    await tokens.#refresh();
    return tokens;
  }

  /** Re-reads the folder when it changed (a token minted or revoked while a run goes on). */
  async #refresh(): Promise<void> {
    const mtime = await Deno.stat(workersDir(this.#sdd)).then(
      (info) => info.mtime?.getTime() ?? null,
      () => null,
    );
    if (this.#loadedMtime !== undefined && mtime === this.#loadedMtime) return;
    this.#byDigest = await readDigests(this.#sdd);
    this.#loadedMtime = mtime;
  }

  /** Names with a token. */
  names(): string[] {
    return [...this.#byDigest.values()].map((e) => e.name).sort();
  }

  /** The worker a token belongs to, or undefined; revocations take effect at once. */
  async authenticate(token: string): Promise<string | undefined> {
    await this.#refresh();
    return this.#lookup(token);
  }

  #lookup(token: string): string | undefined {
    const digest = sha256(encoder.encode(token));
    // Keyed by the digest: lookup time reveals nothing about the token itself.
    const entry = this.#byDigest.get(toHex(digest));
    if (entry === undefined || !timingSafeEqualBytes(digest, entry.digest)) return undefined;
    return entry.name;
  }
}

/** Every valid digest file of `.sdd/workers/`; others are skipped. */
async function readDigests(
  sdd: string,
): Promise<Map<string, { name: string; digest: Uint8Array }>> {
  const entries = new Map<string, { name: string; digest: Uint8Array }>();
  let listing: Deno.DirEntry[] = [];
  try {
    listing = await Array.fromAsync(Deno.readDir(workersDir(sdd)));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const item of listing) {
    if (!item.isFile || !item.name.endsWith(".json")) continue;
    const bytes = await readFileIfExists(join(workersDir(sdd), item.name));
    if (bytes === undefined) continue;
    let parsed;
    try {
      parsed = DigestFile.safeParse(parseJson(new TextDecoder().decode(bytes)));
    } catch {
      continue;
    }
    if (!parsed.success || `${parsed.data.name}.json` !== item.name) continue;
    entries.set(parsed.data.sha256, {
      name: parsed.data.name,
      digest: fromHex(parsed.data.sha256),
    });
  }
  return entries;
}
