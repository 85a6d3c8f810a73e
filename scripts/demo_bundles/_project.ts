// A scenario's throw-away project: a git repository in a temp folder, the example keys in
// place, and every `bernstein` / `bernstein-verify` call made as a real subprocess (the same
// entry points and permission sets a user gets) and written to the scenario's transcript.
import { join } from "node:path";
import { buildChildEnv, outputText, processEnv, runProcess } from "../../src/io/mod.ts";
import { Git, selfCommand, verifyCommand } from "../../src/orchestrator/mod.ts";
import { exampleAuditKeyHex, exampleOperatorKeyPem } from "./_example_keys.ts";

/** One command's result. */
export interface CommandResult {
  /** Exit code. */
  code: number;
  /** Decoded stdout. */
  stdout: string;
  /** Decoded stderr. */
  stderr: string;
}

/** How a command's output goes into the transcript. */
export type Show = "stdout" | "stderr" | "both" | "none";

const CHILD_ENV = ["PATH", "HOME", "DENO_DIR", "TMPDIR"];

/** A scenario's project and transcript. */
export class Project {
  /** The scenario's folder (the repository is `repo/` in it). */
  readonly dir: string;
  /** The git repository the runs work in. */
  readonly repo: string;
  /** Lines of the transcript, as written (normalised later). */
  readonly transcript: string[] = [];
  readonly #git: Git;
  readonly #env: Record<string, string>;

  private constructor(dir: string, scenario: string) {
    this.dir = dir;
    this.repo = join(dir, "repo");
    this.#env = {
      ...buildChildEnv(CHILD_ENV, processEnv, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }),
      BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"),
      TZ: "UTC",
    };
    this.#git = new Git(this.repo, {
      env: { get: (name) => this.#env[name] ?? processEnv.get(name) },
      identity: { name: `${scenario} operator`, email: "operator@example.invalid" },
    });
  }

  /**
   * A fresh project in `dir` (created, must be empty): git repository on branch `main` with
   * `files` committed, checked out on `feature/<scenario>`, `.sdd/config.yaml`, and the
   * scenario's example keys.
   */
  static async create(
    dir: string,
    scenario: string,
    files: Record<string, string>,
    config: string,
  ): Promise<Project> {
    await Deno.mkdir(dir, { recursive: true });
    for await (const _ of Deno.readDir(dir)) throw new Error(`${dir} is not empty`);
    const p = new Project(await Deno.realPath(dir), scenario);
    await Deno.mkdir(p.repo);
    await p.#git.run(["init", "--quiet", "-b", "main"]);
    for (const [path, text] of Object.entries(files)) await p.write(path, text);
    await p.#git.commitAll(p.repo, "initial commit");
    await p.#git.run(["checkout", "--quiet", "-b", `feature/${scenario}`]);
    // Example keys, derived from the scenario's name: reproducible and public, never secrets.
    await Deno.writeTextFile(join(p.dir, "audit.key"), exampleAuditKeyHex(scenario), {
      mode: 0o600,
    });
    await Deno.mkdir(join(p.repo, ".sdd", "keys"), { recursive: true });
    await Deno.writeTextFile(
      join(p.repo, ".sdd", "keys", "operator.key"),
      exampleOperatorKeyPem(scenario),
      { mode: 0o600 },
    );
    await Deno.chmod(join(p.dir, "audit.key"), 0o600);
    await Deno.chmod(join(p.repo, ".sdd", "keys", "operator.key"), 0o600);
    await Deno.writeTextFile(join(p.repo, ".sdd", "config.yaml"), config);
    return p;
  }

  /** Writes a file of the repository (folders created). */
  async write(path: string, text: string): Promise<void> {
    const full = join(this.repo, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeTextFile(full, text);
  }

  /** Adds a heading line to the transcript. */
  say(text: string): void {
    this.transcript.push("", `## ${text}`, "");
  }

  /** Adds a note (plain text) to the transcript. */
  note(text: string): void {
    this.transcript.push(...text.split("\n").map((l) => `# ${l}`));
  }

  /** `bernstein ARGS` in the repository (or `cwd`). */
  bernstein(args: string[], show: Show = "stdout", cwd?: string): Promise<CommandResult> {
    const self = selfCommand(processEnv);
    return this.#run("bernstein", self.argv, self.env, args, show, cwd ?? this.repo);
  }

  /** `bernstein-verify ARGS` (read-only) in `cwd` (default: the scenario folder). */
  verify(args: string[], show: Show = "both", cwd?: string): Promise<CommandResult> {
    const v = verifyCommand(processEnv);
    return this.#run("bernstein-verify", v.argv, v.env, args, show, cwd ?? this.dir);
  }

  /** Any other program (git, deno, tar); shown under `label`. */
  program(
    label: string,
    argv: string[],
    show: Show = "stdout",
    cwd?: string,
    env: Record<string, string> = {},
  ): Promise<CommandResult> {
    return this.#run(label, argv, env, [], show, cwd ?? this.dir, true);
  }

  /** git in the repository (not shown). */
  git(args: string[]): Promise<string> {
    return this.#git.text(args);
  }

  async #run(
    label: string,
    argv: string[],
    extraEnv: Record<string, string>,
    args: string[],
    show: Show,
    cwd: string,
    labelIsArgv = false,
  ): Promise<CommandResult> {
    const r = await runProcess([...argv, ...args], {
      cwd,
      env: { ...this.#env, ...extraEnv },
      timeoutMs: 600_000,
    });
    const result = { code: r.code, stdout: outputText(r.stdout), stderr: outputText(r.stderr) };
    const shown = labelIsArgv ? label : [label, ...args.map(shellWord)].join(" ");
    if (show !== "none") {
      this.transcript.push(`$ ${shown}`);
      const out = show === "stdout"
        ? result.stdout
        : show === "stderr"
        ? result.stderr
        : result.stdout + result.stderr;
      for (const line of out.trimEnd().split("\n")) if (line !== "") this.transcript.push(line);
      this.transcript.push(`(exit ${result.code})`);
    }
    return result;
  }
}

/** Throws with the command's output unless `r` exited with `code`. */
export function expectExit(r: CommandResult, code: number, what: string): void {
  if (r.code !== code) {
    throw new Error(
      `${what}: exit ${r.code}, expected ${code}\n${r.stdout.slice(-4000)}\n${
        r.stderr.slice(-4000)
      }`,
    );
  }
}

/** A word as a POSIX shell reads it back (quoted when it holds anything special). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
