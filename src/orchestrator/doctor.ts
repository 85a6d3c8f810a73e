// `bernstein doctor`: one check per line (configuration, git, adapters, endpoints, task store,
// notifications, isolation, keys), each OK, WARN or FAIL with the reason.

import { dirname, join } from "node:path";
import {
  ADAPTER_NAMES,
  checkAdapter,
  checkAllAvailability,
  isAdapterName,
  systemPathLookup,
} from "../adapters/mod.ts";
import { checkProjectCas } from "../attachments/mod.ts";
import { findProject, isWithin, loadConfig } from "../config/mod.ts";
import { decideIsolation, probeSandbox, type SandboxProbe } from "../sandbox/mod.ts";
import { KeyMissingError } from "../errors/mod.ts";
import { type EnvReader, outputText, runProcess, runtimeDir, systemClock } from "../io/mod.ts";
import { readAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import { readInstallIdentity } from "../fleet/mod.ts";
import { VERSION } from "../meta/mod.ts";
import { storageDoctor } from "../storage/mod.ts";
import { checkConfig } from "./config_checks.ts";
import { worktreesDirOf, worktreesDirProblems } from "./worktrees_dir.ts";
import { certificationProblems } from "./endpoint_certification.ts";
import { Git } from "./git.ts";
import { notifyDoctor } from "./notify_check.ts";
import type { DoctorCheck } from "./doctor_check.ts";
import { githubDoctor } from "./github_backlog.ts";

/** Inputs of {@linkcode runDoctor}. */
export interface DoctorOptions {
  /** Project directory. */
  cwd: string;
  /** Environment. */
  env: EnvReader;
  /** Extra checks contributed by other parts (adapters, storage), run after the built-in ones. */
  extraChecks?: (() => Promise<DoctorCheck[]>)[];
  /** Probes the sandbox (tests fake a machine without one). */
  probeSandbox?: () => Promise<SandboxProbe>;
}

const MIN_GIT = [2, 25];
const MIN_FREE_MIB = 512;

async function gitChecks(cwd: string, env: EnvReader): Promise<DoctorCheck[]> {
  const git = new Git(cwd, { env, timeoutMs: 10_000 });
  let version: string;
  try {
    version = await git.version();
  } catch (error) {
    return [{
      name: "git",
      status: "FAIL",
      detail: `git not usable: ${(error as Error).message}`,
      hint: "install git 2.25 or newer",
    }];
  }
  const [major, minor] = version.split(".").map(Number);
  const checks: DoctorCheck[] = [];
  const oldGit = major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1]);
  checks.push(
    oldGit
      ? {
        name: "git",
        status: "FAIL",
        detail: `git ${version} is older than 2.25 (worktree support)`,
        hint: "upgrade git",
      }
      : { name: "git", status: "OK", detail: `git ${version}` },
  );
  const inside = await git.run(["rev-parse", "--is-inside-work-tree"], { allowFailure: true });
  if (outputText(inside.stdout).trim() !== "true") {
    checks.push({
      name: "repository",
      status: "FAIL",
      detail: `${cwd} is not inside a git work tree`,
      hint: "run bernstein in a git repository (git init)",
    });
    return checks;
  }
  const branch = await git.currentBranch();
  const defaultBranch = await git.defaultBranch();
  // Untracked files (a fresh .sdd/, say) do not block merges; changed tracked files do.
  const dirty = await git.isDirty(undefined, true);
  if (branch === undefined) {
    checks.push({
      name: "repository",
      status: "WARN",
      detail: "HEAD is detached",
      hint: "check out a feature branch for merges",
    });
  } else if (branch === defaultBranch) {
    checks.push({
      name: "repository",
      status: "WARN",
      detail: `on the default branch '${branch}'; runs refuse to merge into it`,
      hint: "git checkout -b feature/… (or BERNSTEIN_ALLOW_MERGE_TO_DEFAULT_BRANCH=1)",
    });
  } else {
    checks.push({
      name: "repository",
      status: dirty ? "WARN" : "OK",
      detail: `on '${branch}'${dirty ? ", uncommitted changes present" : ", clean"}`,
      hint: dirty ? "commit or stash first: merges need a clean tree" : undefined,
    });
  }
  return checks;
}

/**
 * The folder agents' worktrees go to (`workspace.worktrees_dir`, else the project's): its
 * nearest existing folder, which `df` can measure.
 */
async function worktreesPlace(cwd: string, env: EnvReader): Promise<string> {
  const loaded = await loadConfig({ cwd, env }).catch(() => undefined);
  if (loaded?.config?.workspace?.worktrees_dir === undefined) return cwd;
  for (let at = worktreesDirOf(loaded.config, loaded.project);; at = dirname(at)) {
    if (await Deno.stat(at).then((i) => i.isDirectory, () => false)) return at;
    if (dirname(at) === at) return cwd;
  }
}

async function diskCheck(cwd: string, env: EnvReader): Promise<DoctorCheck> {
  try {
    const place = await worktreesPlace(cwd, env);
    const where = place === cwd ? "" : ` (worktrees folder ${place})`;
    const r = await runProcess(["df", "-Pk", place], {
      env: { PATH: env.get("PATH") ?? "/usr/bin:/bin" },
      timeoutMs: 5000,
    });
    const fields = outputText(r.stdout).trim().split("\n").pop()?.split(/\s+/) ?? [];
    const freeMiB = Math.floor(Number(fields[3]) / 1024);
    if (!Number.isFinite(freeMiB)) throw new Error("unexpected df output");
    return freeMiB < MIN_FREE_MIB
      ? {
        name: "disk",
        status: "WARN",
        detail: `${freeMiB} MiB free${where}`,
        hint: `worktrees need space; free at least ${MIN_FREE_MIB} MiB`,
      }
      : { name: "disk", status: "OK", detail: `${freeMiB} MiB free${where}` };
  } catch (error) {
    return {
      name: "disk",
      status: "WARN",
      detail: `cannot measure free space: ${(error as Error).message}`,
    };
  }
}

async function configCheck(cwd: string, env: EnvReader): Promise<DoctorCheck[]> {
  try {
    const loaded = await loadConfig({ cwd, env });
    const problems = loaded.config === undefined ? loaded.problems : [
      ...loaded.problems,
      ...checkConfig({ config: loaded.config, locate: loaded.locate }),
      ...await certificationProblems(loaded.config, loaded.locate, loaded.project.sdd, Date.now()),
      ...await worktreesDirProblems(loaded.config, loaded.project, loaded.locate),
    ];
    const errors = problems.filter((p) => p.severity === "error");
    const warnings = problems.filter((p) => p.severity === "warning");
    const lines: DoctorCheck[] = [];
    for (const p of problems) {
      lines.push({
        name: "config",
        status: p.severity === "error" ? "FAIL" : "WARN",
        detail: `${p.location ? p.location + ": " : ""}${p.message}`,
        hint: p.hint,
      });
    }
    if (errors.length === 0 && warnings.length === 0) {
      const present = loaded.sourceFiles.filter((s) => s.present).map((s) => s.label);
      lines.push({
        name: "config",
        status: "OK",
        detail: `valid (layers: default${present.length ? ", " + present.join(", ") : ""})`,
      });
    }
    return lines;
  } catch (error) {
    return [{ name: "config", status: "FAIL", detail: (error as Error).message }];
  }
}

async function auditKeyCheck(cwd: string, env: EnvReader): Promise<DoctorCheck> {
  let path: string;
  try {
    path = resolveAuditKeyPath(env).path;
    const root = (await findProject(cwd)).root;
    if (isWithin(root, path)) {
      return {
        name: "audit key",
        status: "FAIL",
        detail: `${path} is inside the project ${root}: any agent's worktree can reach it`,
        hint: "move it out of the project and point BERNSTEIN_AUDIT_KEY_PATH at it",
      };
    }
    await readAuditKey(path);
    return { name: "audit key", status: "OK", detail: `${path} (mode 0600, outside the project)` };
  } catch (error) {
    if (error instanceof KeyMissingError) {
      return {
        name: "audit key",
        status: "WARN",
        detail: error.message,
        hint: "the first run creates it; back it up: without it the audit chain cannot be verified",
      };
    }
    return {
      name: "audit key",
      status: "FAIL",
      detail: (error as Error).message,
      hint: (error as { hint?: string }).hint,
    };
  }
}

/** The install identity that signs connection documents (docs/FLEET.md): its fingerprint. */
async function installIdentityCheck(cwd: string): Promise<DoctorCheck> {
  try {
    const { sdd } = await findProject(cwd);
    const id = await readInstallIdentity(sdd);
    return {
      name: "install identity",
      status: "OK",
      detail: `fingerprint (SHA-256) ${id.fingerprint}`,
    };
  } catch (error) {
    const missing = error instanceof KeyMissingError;
    return {
      name: "install identity",
      status: missing ? "WARN" : "FAIL",
      detail: (error as Error).message,
      hint: missing
        ? "'bernstein init' creates it (it signs this install's connection documents)"
        : (error as { hint?: string }).hint,
    };
  }
}

async function portCheck(cwd: string, env: EnvReader): Promise<DoctorCheck> {
  let port = 0;
  try {
    port = (await loadConfig({ cwd, env })).config?.tuning.server.port ?? 0;
  } catch {
    // The config check reports configuration problems.
  }
  try {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    const actual = (listener.addr as Deno.NetAddr).port;
    listener.close();
    return {
      name: "task server",
      status: "OK",
      detail: port === 0
        ? `a free port is available (e.g. ${actual})`
        : `port ${port} on 127.0.0.1 is free`,
    };
  } catch (error) {
    return {
      name: "task server",
      status: "FAIL",
      detail: `cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`,
      hint: "set tuning.server.port to a free port, or 0",
    };
  }
}

async function stateCheck(cwd: string): Promise<DoctorCheck> {
  const sdd = (await findProject(cwd)).sdd;
  const exists = await Deno.stat(sdd).then((i) => i.isDirectory, () => false);
  if (!exists) {
    return {
      name: "state",
      status: "WARN",
      detail: `${sdd} does not exist yet`,
      hint: "run 'bernstein init'",
    };
  }
  try {
    const probe = join(runtimeDir(sdd), `.doctor-${Deno.pid}`);
    await Deno.mkdir(runtimeDir(sdd), { recursive: true });
    await Deno.writeTextFile(probe, "");
    await Deno.remove(probe);
    return { name: "state", status: "OK", detail: `${sdd} is writable` };
  } catch (error) {
    return {
      name: "state",
      status: "FAIL",
      detail: `${sdd} is not writable: ${(error as Error).message}`,
      hint: "run 'bernstein init' or fix permissions",
    };
  }
}

/** The CAS: every blob re-hashed, and the blobs run records need present. */
async function casCheck(cwd: string): Promise<DoctorCheck> {
  try {
    const paths = await findProject(cwd);
    const { check } = await checkProjectCas(paths.sdd, paths.root);
    if (check.problems.length === 0) {
      return {
        name: "cas",
        status: "OK",
        detail: `${check.blobs} blob(s), ${check.bytes} bytes, every one hashes to its key`,
      };
    }
    const serious = check.problems.filter((p) =>
      p.code === "cas.integrity" || p.code === "cas.missing" || p.code === "cas.not_regular"
    );
    const first = check.problems[0];
    return {
      name: "cas",
      status: serious.length > 0 ? "FAIL" : "WARN",
      detail:
        `${check.problems.length} problem(s) in ${check.blobs} blob(s); first: ${first.code} ` +
        `${first.digest ?? first.path}: ${first.message}`,
      hint: "'bernstein cas verify' lists them, 'bernstein cas repair' restores what it can",
    };
  } catch (error) {
    return {
      name: "cas",
      status: "FAIL",
      detail: `cannot check the CAS: ${(error as Error).message}`,
    };
  }
}

async function adapterChecks(cwd: string, env: EnvReader): Promise<DoctorCheck[]> {
  let config;
  try {
    config = (await loadConfig({ cwd, env })).config;
  } catch {
    return []; // the config check reports it
  }
  if (config === undefined) return [];
  const lookup = systemPathLookup(env);
  const configured = new Set<string>();
  if (config.cli !== "auto") configured.add(config.cli);
  for (const policy of Object.values(config.role_model_policy ?? {})) {
    if (policy.cli) configured.add(policy.cli);
  }
  const all = await checkAllAvailability({ lookup, settings: config.adapters });
  const found = all.filter((a) => a.available).map((a) => a.name);
  const checks: DoctorCheck[] = [{
    name: "adapters",
    status: found.length > 0 ? "OK" : "WARN",
    detail: found.length > 0 ? `available: ${found.join(", ")}` : "no agent CLI found on PATH",
    hint: found.length > 0
      ? undefined
      : "install one (e.g. npm i -g @anthropic-ai/claude-code) — see 'bernstein adapters list'",
  }];
  if (config.cli === "auto" && found.every((n) => n === "scripted")) {
    checks.push({
      name: "adapters",
      status: "WARN",
      detail: "cli: auto has nothing to pick",
      hint: "install an agent CLI or set cli:",
    });
  }
  for (const name of [...configured].sort()) {
    if (!isAdapterName(name)) {
      checks.push({
        name: `adapter ${name}`,
        status: "FAIL",
        detail: `'${name}' is not a registered adapter`,
        hint: `known: ${ADAPTER_NAMES.join(", ")}`,
      });
      continue;
    }
    const report = await checkAdapter(name, {
      lookup,
      settings: config.adapters,
      env,
      timeoutMs: config.tuning.agent.probe_timeout_s * 1000,
    });
    if (!report.available) {
      checks.push({
        name: `adapter ${name}`,
        status: "FAIL",
        detail: `configured but not runnable: ${report.reason}`,
        hint: "install it or change cli / role_model_policy",
      });
    } else if (!report.ok) {
      const why = report.missing.length > 0
        ? `flags gone from its --help: ${report.missing.join(", ")}`
        : report.version_error ?? "contract check failed";
      checks.push({
        name: `adapter ${name}`,
        status: "FAIL",
        detail: `${report.version ?? "?"}: ${why}`,
        hint: "pin the CLI version bernstein was checked against ('bernstein adapters check " +
          name + "')",
      });
    } else {
      checks.push({
        name: `adapter ${name}`,
        status: "OK",
        detail: `${report.version ?? "version unknown"} at ${report.path}; flag contract holds`,
      });
    }
  }
  return checks;
}

/** The task store: the embedded log, or each configured engine's version, latency, schema. */
async function storageChecks(cwd: string, env: EnvReader): Promise<DoctorCheck[]> {
  let loaded;
  try {
    loaded = await loadConfig({ cwd, env });
  } catch {
    return []; // the config check reports it
  }
  if (loaded.config === undefined) return [];
  return await storageDoctor({ config: loaded.config, sources: loaded.sources });
}

/** Notification channels and the GitHub sync: where each goes, and why any is off. */
async function notifyChecks(cwd: string, env: EnvReader): Promise<DoctorCheck[]> {
  let loaded;
  try {
    loaded = await loadConfig({ cwd, env });
  } catch {
    return []; // the config check reports it
  }
  if (loaded.config === undefined) return [];
  const project = await findProject(cwd);
  return [
    ...await notifyDoctor(loaded.config, project.root, env, systemClock),
    ...await githubDoctor({
      config: loaded.config,
      root: project.root,
      sdd: project.sdd,
      env,
      clock: systemClock,
    }),
  ];
}

/** The isolation agents would get here: the configured mode against what this machine can do. */
async function isolationCheck(options: DoctorOptions): Promise<DoctorCheck> {
  let requested: "auto" | "sandbox" | "none" = "auto";
  try {
    requested = (await loadConfig({ cwd: options.cwd, env: options.env })).config?.isolation ??
      "auto";
  } catch {
    // Reported by the config check.
  }
  const probe = await (options.probeSandbox ?? probeSandbox)();
  try {
    const decision = decideIsolation(requested, probe);
    if (decision.isolation === "sandbox") {
      const version = probe.available && probe.version ? ` ${probe.version}` : "";
      return {
        name: "isolation",
        status: "OK",
        detail:
          `agents run in the sandbox (${decision.backend}${version}; isolation: ${requested})`,
      };
    }
    return {
      name: "isolation",
      status: "WARN",
      detail: decision.reason ?? "agents run without a sandbox",
      hint: requested === "none"
        ? "set isolation: auto to use the sandbox where it works"
        : "install bubblewrap (Linux) to sandbox agents",
    };
  } catch (error) {
    return {
      name: "isolation",
      status: "FAIL",
      detail: (error as Error).message,
      hint: (error as { hint?: string }).hint,
    };
  }
}

/** Runs every check; the caller prints them and exits 1 when any is FAIL. */
export async function runDoctor(options: DoctorOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [
    {
      name: "bernstein",
      status: "OK",
      detail: `bernstein ${VERSION} on deno ${Deno.version.deno}`,
    },
    ...await gitChecks(options.cwd, options.env),
    await diskCheck(options.cwd, options.env),
    ...await configCheck(options.cwd, options.env),
    await auditKeyCheck(options.cwd, options.env),
    await installIdentityCheck(options.cwd),
    await isolationCheck(options),
    await stateCheck(options.cwd),
    await casCheck(options.cwd),
    ...await storageChecks(options.cwd, options.env),
    await portCheck(options.cwd, options.env),
    ...await adapterChecks(options.cwd, options.env),
    ...await notifyChecks(options.cwd, options.env),
  ];
  for (const extra of options.extraChecks ?? []) checks.push(...await extra());
  return checks;
}
