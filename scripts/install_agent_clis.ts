// Installs pinned versions of the five npm agent CLIs into a cache folder OUTSIDE the repository,
// for the adapter contract tests (`bernstein adapters check`) and the real-agent end-to-end tests.
//
//   deno run -P=dev scripts/install_agent_clis.ts [--only claude,codex] [--json]
//
// Folder: $BERNSTEIN_AGENT_CLIS_DIR, else ~/.cache/bernstein/agent-clis. Each CLI goes into its
// own folder `<name>-<version>/` (one npm failure never breaks another) and gets a link in
// `bin/`, so tests put `<folder>/bin` on PATH. A CLI that fails to install is reported as
// skipped with npm's reason; the script exits 0 unless every install failed, and writes
// `manifest.json` with what it found.
import { join } from "node:path";
import { outputText, runProcess } from "../src/io/mod.ts";

/** One pinned npm agent CLI. */
export interface PinnedCli {
  /** Adapter name (and folder prefix). */
  name: string;
  /** npm package. */
  package: string;
  /** Exact version; bump here and nowhere else. */
  version: string;
  /** Executable name the package installs. */
  bin: string;
}

/**
 * The pinned versions. claude/codex/gemini/opencode are the registry's current releases of the
 * lines AGENT_CLIS.md checked; qwen stays on the 0.15 line AGENT_CLIS.md checked.
 */
export const PINNED_CLIS: readonly PinnedCli[] = [
  { name: "claude", package: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  { name: "codex", package: "@openai/codex", version: "0.171.0", bin: "codex" },
  { name: "gemini", package: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
  { name: "opencode", package: "opencode-ai", version: "1.18.33", bin: "opencode" },
  { name: "qwen", package: "@qwen-code/qwen-code", version: "0.15.10", bin: "qwen" },
];

/** The cache folder: `$BERNSTEIN_AGENT_CLIS_DIR`, else `~/.cache/bernstein/agent-clis`. */
export function agentClisDir(env: { get(name: string): string | undefined }): string {
  const explicit = env.get("BERNSTEIN_AGENT_CLIS_DIR");
  if (explicit) return explicit;
  return join(env.get("HOME") ?? "/tmp", ".cache", "bernstein", "agent-clis");
}

/** What happened to one CLI. */
export interface InstallOutcome {
  /** Adapter name. */
  name: string;
  /** npm package and version. */
  spec: string;
  /** installed (now), present (already there) or skipped (failed, with the reason). */
  status: "installed" | "present" | "skipped";
  /** Absolute path of the executable when installed or present. */
  bin?: string;
  /** Why it was skipped. */
  reason?: string;
}

// npm needs its own configuration (registry, CA bundle, proxies); nothing else is passed.
const NPM_ENV = [
  "PATH",
  "HOME",
  "TMPDIR",
  "LANG",
  "NODE_EXTRA_CA_CERTS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
];

function npmEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (NPM_ENV.includes(k) || /^npm_config_/i.test(k)) out[k] = v;
  }
  return out;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function linkBin(dir: string, cli: PinnedCli, target: string): Promise<string> {
  const binDir = join(dir, "bin");
  await Deno.mkdir(binDir, { recursive: true });
  const link = join(binDir, cli.bin);
  await Deno.remove(link).catch(() => {});
  await Deno.symlink(target, link);
  return link;
}

/** Options of {@linkcode installOne}. */
export interface InstallOptions {
  /** The npm executable (tests pass a stand-in). */
  npm?: string;
}

/** Installs one pinned CLI (or finds it already installed). */
export async function installOne(
  dir: string,
  cli: PinnedCli,
  options: InstallOptions = {},
): Promise<InstallOutcome> {
  const spec = `${cli.package}@${cli.version}`;
  const prefix = join(dir, `${cli.name}-${cli.version}`);
  const target = join(prefix, "node_modules", ".bin", cli.bin);
  if (await isExecutable(target)) {
    return { name: cli.name, spec, status: "present", bin: await linkBin(dir, cli, target) };
  }
  await Deno.mkdir(prefix, { recursive: true });
  let result;
  try {
    result = await runProcess(
      [
        options.npm ?? "npm",
        "install",
        "--prefix",
        prefix,
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        spec,
      ],
      { env: npmEnv(), timeoutMs: 15 * 60_000 },
    );
  } catch (error) {
    return { name: cli.name, spec, status: "skipped", reason: (error as Error).message };
  }
  if (result.code !== 0 || !(await isExecutable(target))) {
    const lines = outputText(result.stderr).trim().split("\n").filter((l) => l.trim() !== "");
    const why = result.timedOut
      ? "npm install timed out"
      : result.code !== 0
      ? `npm exited ${result.code}: ${lines.slice(-3).join(" | ") || "no message"}`
      : `npm succeeded but ${target} is missing`;
    return { name: cli.name, spec, status: "skipped", reason: why };
  }
  return { name: cli.name, spec, status: "installed", bin: await linkBin(dir, cli, target) };
}

if (import.meta.main) {
  const args = [...Deno.args];
  const json = args.includes("--json");
  const onlyAt = args.indexOf("--only");
  const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? "").split(",").filter((s) => s) : [];
  const dir = agentClisDir({ get: (n) => Deno.env.get(n) });
  await Deno.mkdir(dir, { recursive: true });
  const outcomes: InstallOutcome[] = [];
  for (const cli of PINNED_CLIS) {
    if (only.length > 0 && !only.includes(cli.name)) continue;
    const outcome = await installOne(dir, cli);
    outcomes.push(outcome);
    if (!json) {
      const detail = outcome.status === "skipped" ? outcome.reason : outcome.bin;
      console.log(`${outcome.status.padEnd(9)} ${outcome.spec.padEnd(34)} ${detail}`);
    }
  }
  await Deno.writeTextFile(
    join(dir, "manifest.json"),
    JSON.stringify({ pinned: PINNED_CLIS, outcomes }, null, 2) + "\n",
  );
  if (json) console.log(JSON.stringify({ dir, outcomes }));
  else console.log(`agent CLIs in ${join(dir, "bin")}`);
  const failed = outcomes.filter((o) => o.status === "skipped").length;
  Deno.exit(outcomes.length > 0 && failed === outcomes.length ? 1 : 0);
}
