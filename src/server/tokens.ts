// Bearer tokens of the task server. The operator token lives outside the project, beside the
// audit key (`<audit key folder>/projects/<project id>/auth.token`, mode 0600): an agent's
// worktree is inside the project, so nothing it can name with `../..` holds the token. Each
// agent session gets its own token scoped to its task(s); only its SHA-256 digest is stored
// (`.sdd/runtime/tokens/<session>.json`); the token itself reaches the agent through a file in
// the agent's private HOME. Digests are compared in constant time.
import { dirname, join } from "node:path";
import { z } from "zod";
import { fromHex, toBase64Url, toHex } from "../canonical/mod.ts";
import { sha256, timingSafeEqualBytes } from "../crypto/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { type Random, readFileIfExists, writeFileAtomic } from "../io/mod.ts";
import { readTokenFile } from "./_secret_file.ts";
import { TokenFileError } from "./errors.ts";

/** File name of the operator token. */
export const OPERATOR_TOKEN_FILE = "auth.token";

/**
 * Where a project's operator token lives: in the folder of the audit key (by default
 * `~/.local/state/bernstein`), under `projects/<first 16 hex of SHA-256 of the project root>/`.
 * Outside the project, so no agent worktree reaches it by a relative path, and beside the
 * other key the operator already keeps out of reach.
 */
export function operatorTokenPath(auditKeyPath: string, projectRoot: string): string {
  const id = sha256Hex(new TextEncoder().encode(projectRoot)).slice(0, 16);
  return join(dirname(auditKeyPath), "projects", id, OPERATOR_TOKEN_FILE);
}

/** Folder of agent session tokens inside `.sdd/runtime/`. */
export const AGENT_TOKEN_DIR = "tokens";

/** What an agent session's token may do. */
export interface AgentScope {
  /** `agent`. */
  kind: "agent";
  /** Session id (names the token files). */
  session: string;
  /** Agent id, the only id its heartbeats may use. */
  agent_id: string;
  /** Tasks it may claim, complete, fail, block and report progress on. */
  task_ids: string[];
  /** A manager: may create child tasks of its own tasks (`POST /tasks`). */
  can_create_tasks: boolean;
}

/** The operator: everything. */
export interface OperatorScope {
  /** `operator`. */
  kind: "operator";
}

/** The scope a bearer token grants. */
export type TokenScope = OperatorScope | AgentScope;

/** A freshly issued agent token. */
export interface IssuedToken {
  /** The secret (give it to the agent only, through a file in its private HOME). */
  token: string;
  /** What it grants. */
  scope: AgentScope;
}

const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const ScopeFileSchema = z.object({
  v: z.literal(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  scope: z.object({
    kind: z.literal("agent"),
    session: z.string().regex(SESSION),
    agent_id: z.string().min(1).max(200),
    task_ids: z.array(z.string().min(1)),
    can_create_tasks: z.boolean(),
  }).strict(),
}).strict();

const encoder = new TextEncoder();

function digestOf(token: string): Uint8Array {
  return sha256(encoder.encode(token));
}

function newToken(prefix: string, random: Random): string {
  return `${prefix}_${toBase64Url(random.bytes(32))}`;
}

interface Entry {
  digest: Uint8Array;
  scope: AgentScope;
}

/** Options of {@linkcode TokenRegistry.open}. */
export interface TokenRegistryOptions {
  /** Randomness for new tokens (cryptographic in production). */
  random: Random;
  /** Where the operator token is kept ({@linkcode operatorTokenPath}; never inside the project). */
  operatorTokenPath: string;
}

/**
 * The server's tokens: the operator token (created on first use) and agent session tokens
 * (issued by the run loop at spawn, revoked when the session ends). Survives a restart:
 * issued tokens are reloaded from their scope files.
 *
 * @example
 * ```ts ignore
 * const tokens = await TokenRegistry.open(".sdd/runtime", {
 *   random: systemRandom,
 *   operatorTokenPath: operatorTokenPath(auditKeyPath, projectRoot),
 * });
 * const issued = await tokens.issueAgentToken({
 *   session: "s-1", agent_id: "s-1", task_ids: [task.id], can_create_tasks: false,
 * });
 * // give issued.token to the agent (a 0600 file in its private HOME)
 * ```
 */
export class TokenRegistry {
  readonly #dir: string;
  readonly #random: Random;
  readonly #operatorDigest: Uint8Array;
  readonly #byDigest = new Map<string, Entry>();
  readonly #bySession = new Map<string, string>();
  /** Path of the operator token file. */
  readonly operatorTokenPath: string;

  private constructor(
    runtimeDir: string,
    random: Random,
    operatorToken: string,
    operatorPath: string,
  ) {
    this.#dir = join(runtimeDir, AGENT_TOKEN_DIR);
    this.#random = random;
    this.#operatorDigest = digestOf(operatorToken);
    this.operatorTokenPath = operatorPath;
  }

  /**
   * Opens the registry under `runtimeDir` (`.sdd/runtime`): reads or creates the operator
   * token at `options.operatorTokenPath` (mode 0600 in a 0700 folder; a token readable by
   * others is refused) and reloads agent token digests.
   */
  static async open(runtimeDir: string, options: TokenRegistryOptions): Promise<TokenRegistry> {
    await Deno.mkdir(runtimeDir, { recursive: true, mode: 0o700 });
    const path = options.operatorTokenPath;
    await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    let operator = await readTokenFile(path);
    if (operator === undefined) {
      operator = newToken("bop", options.random);
      await writeFileAtomic(path, operator, { mode: 0o600 });
    }
    const registry = new TokenRegistry(runtimeDir, options.random, operator, path);
    await Deno.mkdir(registry.#dir, { recursive: true, mode: 0o700 });
    for await (const item of Deno.readDir(registry.#dir)) {
      if (!item.isFile || !item.name.endsWith(".json")) continue;
      const file = join(registry.#dir, item.name);
      const bytes = await readFileIfExists(file);
      if (bytes === undefined) continue;
      let parsed;
      try {
        parsed = ScopeFileSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      } catch (error) {
        throw new TokenFileError(`not JSON: ${(error as Error).message}`, { location: file });
      }
      if (!parsed.success) {
        throw new TokenFileError(`not a token scope file: ${parsed.error.issues[0].message}`, {
          location: file,
        });
      }
      registry.#remember(parsed.data.sha256, parsed.data.scope);
    }
    return registry;
  }

  #remember(hex: string, scope: AgentScope): void {
    const old = this.#bySession.get(scope.session);
    if (old !== undefined) this.#byDigest.delete(old);
    const digest = fromHex(hex);
    this.#byDigest.set(hex, { digest, scope: { ...scope, task_ids: [...scope.task_ids] } });
    this.#bySession.set(scope.session, hex);
  }

  #files(session: string): { token: string; scope: string } {
    if (!SESSION.test(session)) {
      throw new TokenFileError(
        `session '${session}' must be 1-128 characters of A-Z a-z 0-9 . _ -`,
        { location: "session" },
      );
    }
    return {
      token: join(this.#dir, `${session}.token`),
      scope: join(this.#dir, `${session}.json`),
    };
  }

  async #saveScope(hex: string, scope: AgentScope): Promise<void> {
    const body = JSON.stringify({ v: 1, sha256: hex, scope }) + "\n";
    await writeFileAtomic(this.#files(scope.session).scope, body, { mode: 0o600 });
  }

  /**
   * Issues (or replaces) the token of an agent session. Only its digest is stored (in the
   * session's scope file); the caller hands the token to the agent alone.
   */
  async issueAgentToken(scope: Omit<AgentScope, "kind">): Promise<IssuedToken> {
    this.#files(scope.session);
    const full: AgentScope = { kind: "agent", ...scope, task_ids: [...scope.task_ids] };
    const token = newToken("bag", this.#random);
    const hex = toHex(digestOf(token));
    await this.#saveScope(hex, full);
    this.#remember(hex, full);
    return { token, scope: full };
  }

  /** Adds tasks to a session's scope (e.g. a retry given to the same session). */
  async grantTasks(session: string, taskIds: readonly string[]): Promise<AgentScope> {
    const hex = this.#bySession.get(session);
    const entry = hex === undefined ? undefined : this.#byDigest.get(hex);
    if (hex === undefined || entry === undefined) {
      throw new TokenFileError(`no token was issued to session '${session}'`);
    }
    const scope = {
      ...entry.scope,
      task_ids: [...new Set([...entry.scope.task_ids, ...taskIds])],
    };
    await this.#saveScope(hex, scope);
    this.#remember(hex, scope);
    return scope;
  }

  /**
   * Revokes a session's token and deletes its scope file (and a token file an older version
   * wrote beside it). Unknown sessions are ignored.
   */
  async revoke(session: string): Promise<void> {
    const files = this.#files(session);
    const hex = this.#bySession.get(session);
    if (hex !== undefined) this.#byDigest.delete(hex);
    this.#bySession.delete(session);
    for (const path of [files.scope, files.token]) {
      await Deno.remove(path).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
    }
  }

  /** The scope of a presented token, or undefined when it is not valid. */
  authenticate(token: string): TokenScope | undefined {
    const digest = digestOf(token);
    if (timingSafeEqualBytes(digest, this.#operatorDigest)) return { kind: "operator" };
    // The map is keyed by the digest, so lookup time reveals nothing about the token itself.
    const entry = this.#byDigest.get(toHex(digest));
    if (entry === undefined || !timingSafeEqualBytes(digest, entry.digest)) return undefined;
    return { ...entry.scope, task_ids: [...entry.scope.task_ids] };
  }

  /** Scopes of every issued agent token. */
  agentScopes(): AgentScope[] {
    return [...this.#byDigest.values()].map((e) => ({ ...e.scope }));
  }
}
