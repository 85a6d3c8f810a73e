/**
 * The git remote workers reach: a bare repository at `.sdd/runtime/remote.git`, served over
 * git's smart HTTP protocol by `git http-backend` behind the task server's own port and bearer
 * tokens (`/git/remote.git/…`). Why this and not `git daemon` or ssh: it needs no second port,
 * no unauthenticated push and no accounts on the orchestrator's host, and plain HTTP crosses
 * network namespaces, NAT and tunnels like the rest of the worker protocol.
 *
 * The orchestrator publishes each base commit into it before handing an assignment out (workers
 * fetch it by id); workers push `agent/<session>` there, and a pre-receive hook accepts only the
 * creation of branches of sessions that worker holds (never an update, a deletion or any other
 * ref). The orchestrator then fetches the branch into the project and checks it like local work.
 */
import { join } from "node:path";
import { BernsteinError } from "../errors/mod.ts";
import { type EnvReader, readFileIfExists, spawnProcess, writeFileAtomic } from "../io/mod.ts";
import type { Git } from "../orchestrator/mod.ts";
import { errorResponse, HttpError, type MountContext, type ServerMount } from "../server/mod.ts";

/** The repository's name in URLs. */
export const REMOTE_NAME = "remote.git";
/** URL path of the repository on the task server. */
export const GIT_PATH = `/git/${REMOTE_NAME}`;
/** Largest push accepted (bytes). */
const MAX_PUSH_BYTES = 512 * 1024 * 1024;
/** Deadline of one `git http-backend` run. */
const BACKEND_TIMEOUT_MS = 10 * 60_000;

// Only creations of refs/heads/agent/<session> for sessions the pushing worker holds.
const PRE_RECEIVE = `#!/bin/sh
# Installed by bernstein: workers may only create the agent branches of sessions they hold.
while read old new ref; do
  case "$old" in *[!0]*) echo "bernstein: $ref exists; branches are never updated" >&2; exit 1;; esac
  case "$new" in *[!0]*) ;; *) echo "bernstein: $ref may not be deleted" >&2; exit 1;; esac
  allowed=no
  for r in $BERNSTEIN_PUSH_REFS; do [ "$r" = "$ref" ] && allowed=yes; done
  if [ "$allowed" != yes ]; then
    echo "bernstein: $ref is not a branch of a session $REMOTE_USER holds" >&2; exit 1
  fi
done
exit 0
`;

/** Who may use the endpoint, and what they may push. */
export interface GitAccess {
  /** The worker a bearer token belongs to, or undefined. */
  worker(token: string): Promise<string | undefined>;
  /** `refs/heads/agent/<session>` of every session `worker` holds now. */
  pushRefs(worker: string): string[];
  /** A request was refused for its token (recorded by the caller). */
  refused(address: string, reason: string): void;
}

/** The bare repository and its HTTP endpoint. */
export class GitRemote implements ServerMount {
  readonly prefix = "/git/";
  /** Folder of the bare repository. */
  readonly dir: string;
  readonly #runtimeDir: string;
  readonly #git: Git;
  readonly #env: EnvReader;
  readonly #access: GitAccess;
  #published = new Set<string>();
  #publishing: Promise<void> = Promise.resolve();

  private constructor(runtimeDir: string, git: Git, env: EnvReader, access: GitAccess) {
    this.#runtimeDir = runtimeDir;
    this.dir = join(runtimeDir, REMOTE_NAME);
    this.#git = git;
    this.#env = env;
    this.#access = access;
  }

  /** Creates (or reuses) the bare repository with its push rules. */
  static async open(
    runtimeDir: string,
    git: Git,
    env: EnvReader,
    access: GitAccess,
  ): Promise<GitRemote> {
    const remote = new GitRemote(runtimeDir, git, env, access);
    await remote.#init();
    return remote;
  }

  async #init(): Promise<void> {
    const exists = await readFileIfExists(join(this.dir, "HEAD")) !== undefined;
    if (!exists) {
      const format = await this.#git.text(["rev-parse", "--show-object-format"]).catch(() =>
        "sha1"
      );
      await this.#git.run(["init", "--quiet", "--bare", `--object-format=${format}`, this.dir]);
    }
    const settings: [string, string][] = [
      ["uploadpack.allowAnySHA1InWant", "true"],
      ["http.receivepack", "true"],
      ["receive.denyDeletes", "true"],
      ["receive.denyNonFastForwards", "true"],
      ["core.hooksPath", join(this.dir, "hooks")],
    ];
    for (const [key, value] of settings) {
      await this.#git.run(["config", "--file", join(this.dir, "config"), key, value]);
    }
    await Deno.mkdir(join(this.dir, "hooks"), { recursive: true });
    await writeFileAtomic(join(this.dir, "hooks", "pre-receive"), PRE_RECEIVE, { mode: 0o755 });
    await Deno.chmod(join(this.dir, "hooks", "pre-receive"), 0o755);
  }

  /** Makes `sha` (a commit of the project) fetchable by workers. */
  publish(sha: string): Promise<void> {
    if (this.#published.has(sha)) return Promise.resolve();
    const run = this.#publishing.then(async () => {
      if (this.#published.has(sha)) return;
      await this.#git.exclusive(() =>
        this.#git.run([
          "--git-dir",
          this.dir,
          "fetch",
          "--quiet",
          "--no-tags",
          this.#git.root,
          `+${sha}:refs/heads/bernstein/base`,
        ])
      );
      this.#published.add(sha);
    });
    this.#publishing = run.catch(() => {});
    return run;
  }

  /**
   * Fetches a worker's `agent/<session>` into the project (same branch name) and checks that it
   * points at `head`.
   */
  async collect(session: string, head: string): Promise<string> {
    const branch = `agent/${session}`;
    await this.#git.exclusive(() =>
      this.#git.run([
        "fetch",
        "--quiet",
        "--no-tags",
        this.dir,
        `refs/heads/${branch}:refs/heads/${branch}`,
      ])
    );
    const got = await this.#git.revParse(`refs/heads/${branch}`);
    if (got !== head) {
      throw new BernsteinError(
        "workers.branch_mismatch",
        `${branch} in the remote is at ${got.slice(0, 12)}, the worker reported ${
          head.slice(0, 12)
        }`,
      );
    }
    // The project has the branch now. The remote forgets it, so that what every later push
    // and fetch advertises is the work in flight, not every branch of the run (a push cost
    // grew with them: ~0.3 s more at 600).
    await this.#git.exclusive(() =>
      this.#git.run(["--git-dir", this.dir, "update-ref", "-d", `refs/heads/${branch}`, head], {
        allowFailure: true,
      })
    );
    return branch;
  }

  /** Serves `/git/remote.git/…` through `git http-backend`. */
  async handle(req: Request, url: URL, context: MountContext): Promise<Response> {
    try {
      const worker = await this.#authorise(req, context);
      const pathInfo = url.pathname.slice("/git".length);
      if (!pathInfo.startsWith(`/${REMOTE_NAME}/`) || pathInfo.includes("..")) {
        throw new HttpError(404, "server.not_found", `no repository at ${url.pathname}`);
      }
      return await this.#backend(req, url, pathInfo, worker, context.remoteAddr);
    } catch (error) {
      return errorResponse(error);
    }
  }

  async #authorise(req: Request, context: MountContext): Promise<string> {
    if (context.isOperator) return "operator";
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.get("authorization") ?? "")?.[1];
    const worker = token === undefined ? undefined : await this.#access.worker(token);
    if (worker === undefined) {
      const reason = token === undefined ? "no bearer token" : "an unknown token";
      this.#access.refused(context.remoteAddr, `git endpoint: ${reason}`);
      throw new HttpError(401, "auth.invalid_token", "a worker token is required");
    }
    return worker;
  }

  async #backend(
    req: Request,
    url: URL,
    pathInfo: string,
    worker: string,
    remoteAddr: string,
  ): Promise<Response> {
    const body = new Uint8Array(await req.arrayBuffer());
    if (body.length > MAX_PUSH_BYTES) {
      throw new HttpError(413, "server.body_too_large", `more than ${MAX_PUSH_BYTES} bytes`);
    }
    const env: Record<string, string> = {
      PATH: this.#env.get("PATH") ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: this.#runtimeDir,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: this.dir,
      PATH_INFO: pathInfo,
      REQUEST_METHOD: req.method,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers.get("content-type") ?? "",
      CONTENT_LENGTH: String(body.length),
      REMOTE_USER: worker,
      REMOTE_ADDR: remoteAddr,
      BERNSTEIN_PUSH_REFS: worker === "operator" ? "" : this.#access.pushRefs(worker).join(" "),
    };
    const protocol = req.headers.get("git-protocol");
    if (protocol !== null) env.GIT_PROTOCOL = protocol;
    const encoding = req.headers.get("content-encoding");
    if (encoding !== null) env.HTTP_CONTENT_ENCODING = encoding;
    return await runCgi(["git", "http-backend"], env, body);
  }
}

/** Runs a CGI program and turns its output (headers, blank line, body) into a Response. */
async function runCgi(
  argv: string[],
  env: Record<string, string>,
  body: Uint8Array,
): Promise<Response> {
  const chunks: Uint8Array[] = [];
  const done = await spawnProcess(argv, {
    env,
    stdin: body,
    timeoutMs: BACKEND_TIMEOUT_MS,
    maxCaptureBytes: 0,
    onStdout: (chunk) => chunks.push(chunk.slice()),
    // Each fetch and push of a worker is a few of these: they must not fork the orchestrator.
    group: "setsid",
  }).done;
  const out = concat(chunks);
  const split = headerEnd(out);
  if (done.code !== 0 && split < 0) {
    throw new HttpError(500, "workers.git_failed", "git http-backend failed");
  }
  const head = new TextDecoder().decode(out.subarray(0, Math.max(split, 0)));
  const headers = new Headers();
  let status = 200;
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
    else headers.append(name, value);
  }
  const rest = split < 0 ? new Uint8Array() : out.slice(split);
  return new Response(rest.length > 0 ? rest : null, { status, headers });
}

/** Offset just past the CGI header block (`\r\n\r\n` or `\n\n`), or -1. */
function headerEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === 0x0a && bytes[i + 1] === 0x0a) return i + 2;
    if (
      bytes[i] === 0x0d && bytes[i + 1] === 0x0a && bytes[i + 2] === 0x0d &&
      bytes[i + 3] === 0x0a
    ) return i + 4;
  }
  return -1;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
