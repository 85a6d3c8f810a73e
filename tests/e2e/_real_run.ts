// A real `bernstein run` with real agent CLIs against the local model servers: a temporary git
// repository on a feature branch, a plan whose step descriptions carry the model's script
// (`@model …` lines), configuration through BERNSTEIN_CONFIG_OVERRIDE (role → cli + endpoint
// profile, small deadlines), the egress sentinel as every CLI's proxy, and the whole binary
// (`deno run -P=bernstein main.ts run --json`) as a subprocess.
import { join } from "node:path";
import { PINNED_CLIS, type PinnedCli } from "../../scripts/install_agent_clis.ts";
import { type CliRun, runBernstein } from "../_helpers/cli.ts";
import { certifyProfilesForTest } from "../_helpers/endpoint_receipts.ts";
import { agentClisBin, pinnedStatus } from "../_helpers/real_cli.ts";
import { git, makeRepo } from "../_helpers/temp.ts";
import type { ApiName, EgressSentinel, ModelServer } from "./model_servers/mod.ts";

/** The five real CLIs the run loop drives, with the API their endpoint speaks. */
export interface RealCli {
  /** Adapter name. */
  name: string;
  /** Pinned package and version. */
  pin: PinnedCli;
  /** Absolute path of the installed executable, when the pinned version is installed. */
  exe?: string;
  /** Why it is not installed, as an ignored test's name suffix (empty when installed). */
  why: string;
  /** API of its endpoint profile. */
  api: ApiName;
  /** Base URL of its endpoint profile on a server at `origin`. */
  baseUrl(origin: string): string;
  /** Whether the CLI has a turn limit of its own. */
  turnLimit: boolean;
  /** Whether it reports cost. */
  reportsCost: boolean;
}

const API: Readonly<Record<string, { api: ApiName; v1: boolean }>> = {
  claude: { api: "anthropic", v1: false },
  codex: { api: "openai-responses", v1: true },
  gemini: { api: "gemini", v1: false },
  opencode: { api: "openai-chat", v1: true },
  qwen: { api: "openai-chat", v1: true },
};

/** The pinned CLIs, each with whether it is installed. */
export const REAL_CLIS: readonly RealCli[] = PINNED_CLIS.map((pin) => {
  const api = API[pin.name];
  const { exe, why } = pinnedStatus(pin);
  return {
    name: pin.name,
    pin,
    ...(exe !== undefined ? { exe } : {}),
    why,
    api: api.api,
    baseUrl: (origin: string) => (api.v1 ? `${origin}/v1` : origin),
    turnLimit: ["claude", "gemini", "qwen"].includes(pin.name),
    reportsCost: ["claude", "opencode"].includes(pin.name),
  };
});

/** The suffix of an ignored test's name: why it cannot run here (empty when it can). */
export function skipReason(cli: RealCli): string {
  return cli.why;
}

/** The endpoint key every profile names (`api_key_env`); it must reach the model server. */
export const MODEL_KEY_ENV = "BERNSTEIN_TEST_MODEL_KEY";
/** Its value. */
export const MODEL_KEY = "bk-local-endpoint-key-7f3a";
/** A provider key set in bernstein's own environment that must never reach an agent. */
export const LEAKED_KEY = "sk-real-provider-key-must-not-leak";

/** One plan step. */
export interface StepSpec {
  /** Title (the task id is `1.<n>-<slug>`). */
  title: string;
  /** Adapter. */
  cli: string;
  /** Role (mapped to the cli's endpoint by the configuration). */
  role: string;
  /** The model's script for this step (`@model …` lines) and any other text. */
  description: string;
  /** Files the step owns. */
  files: string[];
  /** Files that must exist in the worktree (completion signals). */
  expect?: string[];
  /** The step's attachments (paths in the repository, or held by value: `{name, image}`). */
  attachments?: (string | { name: string; image: { mime: string; base64: string } })[];
}

/** Tuning for a run (seconds). */
export interface RunTuning {
  /** Agent deadline (every scope, and the floor). */
  deadline_s?: number;
  /** Retries of every task. */
  max_retries?: number;
  /** Turn limit. */
  max_turns?: number;
  /** First retry delay. */
  backoff_s?: number;
  /** Longest retry delay. */
  backoff_max_s?: number;
  /** Least delay before retrying a rate-limited attempt. */
  cooldown_s?: number;
  /** Request timeout of every endpoint profile (`local_endpoints.*.timeout`). */
  endpoint_timeout_s?: number;
  /** Extra configuration merged at the top level. */
  extra?: Record<string, unknown>;
}

/** The plan file text for `steps`, all in one stage (so they run in parallel). */
export function planYaml(steps: readonly StepSpec[]): string {
  const lines = ["name: real-agents", "stages:", "  - name: build", "    steps:"];
  for (const s of steps) {
    lines.push(
      `      - title: ${JSON.stringify(s.title)}`,
      `        cli: ${s.cli}`,
      `        role: ${s.role}`,
      `        scope: small`,
      `        files: ${JSON.stringify(s.files)}`,
      "        description: |",
      ...s.description.trimEnd().split("\n").map((l) => `          ${l}`),
    );
    if (s.attachments !== undefined) {
      lines.push(`        attachments: ${JSON.stringify(s.attachments)}`);
    }
    const expect = s.expect ?? [];
    if (expect.length > 0) {
      lines.push("        completion_signals:");
      for (const f of expect) lines.push(`          - path_exists: ${JSON.stringify(f)}`);
    }
  }
  return lines.join("\n") + "\n";
}

/**
 * The configuration override: roles → cli + endpoint, endpoints on `origin` (a model server,
 * or a port nothing listens on), tuning, and the sentinel's proxy names for every adapter.
 */
export function runConfig(
  steps: readonly StepSpec[],
  options: { origin: string; sentinel: EgressSentinel; tuning?: RunTuning },
): Record<string, unknown> {
  const t = options.tuning ?? {};
  const deadline = t.deadline_s ?? 120;
  const roles: Record<string, unknown> = {};
  const endpoints: Record<string, unknown> = {};
  const adapters: Record<string, unknown> = {};
  for (const s of steps) {
    const cli = REAL_CLIS.find((c) => c.name === s.cli);
    if (cli === undefined) throw new Error(`not a real CLI: ${s.cli}`);
    roles[s.role] = { cli: s.cli, endpoint: `fake-${s.cli}` };
    endpoints[`fake-${s.cli}`] = {
      base_url: cli.baseUrl(options.origin),
      api: cli.api,
      model: "fake-model",
      api_key_env: MODEL_KEY_ENV,
      ...(t.endpoint_timeout_s !== undefined ? { timeout: t.endpoint_timeout_s } : {}),
    };
    // The operator's way to give agents a proxy: exact names through adapters.<cli>.env.
    adapters[s.cli] = { env: Object.keys(options.sentinel.env()) };
  }
  return {
    role_model_policy: roles,
    local_endpoints: endpoints,
    adapters,
    tuning: {
      orchestrator: {
        tick_interval_s: 0.2,
        max_agent_runtime_s: deadline,
        scope_runtime_s: { small: deadline, medium: deadline, large: deadline, xl: deadline },
      },
      spawn: {
        spawn_backoff_base_s: t.backoff_s ?? 0.2,
        spawn_backoff_max_s: t.backoff_max_s ?? 1,
        rate_limit_cooldown_s: t.cooldown_s ?? 2,
      },
      agent: { kill_grace_s: 1, max_turns: t.max_turns ?? 6 },
      tasks: { default_max_retries: t.max_retries ?? 0 },
    },
    ...(t.extra ?? {}),
  };
}

/** What one real run left behind. */
export interface RealRun {
  /** Repository root. */
  root: string;
  /** The `bernstein run --json` process. */
  cli: CliRun;
  /** Its JSON event lines. */
  events: Record<string, unknown>[];
  /** `.sdd/runs/<id>/summary.json`, when written. */
  summary?: Record<string, unknown>;
  /** Wall time of the run in seconds. */
  seconds: number;
  /** Environment the run had (for follow-up commands). */
  env: Record<string, string>;
}

/** Options of {@linkcode runReal}. */
export interface RealRunOptions {
  /** Plan steps. */
  steps: StepSpec[];
  /** The model server. */
  server: ModelServer;
  /** The egress sentinel. */
  sentinel: EgressSentinel;
  /** Tuning. */
  tuning?: RunTuning;
  /** Origin the endpoint profiles point at instead of the server's (e.g. a dead port). */
  endpointOrigin?: string;
  /** Adds files to the repository before the plan is committed with them. */
  prepare?: (root: string) => Promise<void>;
}

/** Parses `--json` output lines (ignoring anything that is not a JSON object). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // Not an event line.
    }
  }
  return out;
}

/** Creates the repository in `dir`, runs the plan, and returns what happened. */
export async function runReal(dir: string, options: RealRunOptions): Promise<RealRun> {
  const root = join(dir, "repo");
  await Deno.mkdir(root);
  await makeRepo(root);
  await Deno.writeTextFile(join(root, "plan.yaml"), planYaml(options.steps));
  await options.prepare?.(root);
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "plan");
  const home = join(dir, "home");
  await Deno.mkdir(home);
  const config = runConfig(options.steps, {
    origin: options.endpointOrigin ?? options.server.origin,
    sentinel: options.sentinel,
    tuning: options.tuning,
  });
  // Every role here is merge-critical: its endpoint profile needs a certification receipt.
  await certifyProfilesForTest(
    root,
    config.local_endpoints as Record<string, { base_url: string; model?: string }>,
  );
  const env: Record<string, string> = {
    PATH: `${agentClisBin()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: home,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/tmp", ".cache", "deno"),
    // A source run is `deno run`: no update check (it would show up at the sentinel).
    DENO_NO_UPDATE_CHECK: "1",
    BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"),
    BERNSTEIN_CONFIG_OVERRIDE: JSON.stringify(config),
    [MODEL_KEY_ENV]: MODEL_KEY,
    // Real provider keys in the operator's environment: with an endpoint none may pass.
    ANTHROPIC_API_KEY: LEAKED_KEY,
    OPENAI_API_KEY: LEAKED_KEY,
    GEMINI_API_KEY: LEAKED_KEY,
    ...options.sentinel.env(),
  };
  const started = performance.now();
  const cli = await runBernstein(["run", "plan.yaml", "--json"], { cwd: root, env });
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  const events = jsonLines(cli.stdout);
  const last = events.find((e) => e.type === "run.summary");
  const summary = last?.summary as Record<string, unknown> | undefined;
  return { root, cli, events, ...(summary ? { summary } : {}), seconds, env };
}

/** Runs `bernstein ARGS` in the run's repository with its environment. */
export function bernsteinIn(run: RealRun, args: readonly string[]): Promise<CliRun> {
  return runBernstein(args, { cwd: run.root, env: run.env });
}

/** The tasks of the run as the task log left them (last record per id). */
export async function taskRecords(run: RealRun): Promise<Map<string, Record<string, unknown>>> {
  const text = await Deno.readTextFile(join(run.root, ".sdd", "runtime", "tasks.jsonl"));
  const tasks = new Map<string, Record<string, unknown>>();
  // Each line is `{"v":1,"tasks":[…]}` (a snapshot or the tasks one write changed).
  for (const rec of jsonLines(text)) {
    for (const task of (rec.tasks ?? []) as Record<string, unknown>[]) {
      if (typeof task.id === "string") tasks.set(task.id, task);
    }
  }
  return tasks;
}

/** Rows of the run's work ledger. */
export async function ledgerRows(run: RealRun): Promise<Record<string, unknown>[]> {
  const runId = String(run.summary?.run_id ?? "");
  const path = join(run.root, ".sdd", "runtime", "ledger", runId, "000000.jsonl");
  return jsonLines(await Deno.readTextFile(path));
}

/** The session log of a task attempt (`.sdd/runtime/<session>.log`). */
export function sessionLog(run: RealRun, session: string): Promise<string> {
  return Deno.readTextFile(join(run.root, ".sdd", "runtime", `${session}.log`));
}

/** Every audit record of the run's project, in chain order. */
export async function auditEvents(run: RealRun): Promise<Record<string, unknown>[]> {
  const dir = join(run.root, ".sdd", "audit");
  const names = (await Array.fromAsync(Deno.readDir(dir)))
    .filter((e) => e.isFile && e.name.endsWith(".jsonl"))
    .map((e) => e.name)
    .sort();
  const out: Record<string, unknown>[] = [];
  for (const name of names) out.push(...jsonLines(await Deno.readTextFile(join(dir, name))));
  return out;
}

/** The run tag in session ids (`<task>-a<n>-<tag>`): the hex tail of the run id. */
export function runTag(run: RealRun): string {
  const id = String(run.summary?.run_id ?? "");
  if (id === "") throw new Error("the run has no summary (it did not finish)");
  return id.split("-").pop() as string;
}
