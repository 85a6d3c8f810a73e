// `bernstein init`: the `.sdd/` folders with their modes, the workspace config template, the
// project template and the paths excluded from git.

import { join } from "node:path";
import { toHex } from "../canonical/mod.ts";
import { pathExists, SDD_DIR, SDD_FOLDERS, writeFileIfAbsent } from "../io/mod.ts";
import type { Random } from "../io/mod.ts";
import { DEFAULT_TUNING } from "./defaults.ts";
import type { ProjectPaths } from "./project.ts";
import { EXCLUDED_RUN_CONFIG } from "./run_config_paths.ts";

/** The `.sdd/` folders init creates (names from src/io's layout), with their modes. */
const INIT_FOLDERS: readonly { path: string; mode: number }[] = [
  { path: "", mode: 0o755 },
  { path: SDD_FOLDERS.audit, mode: 0o700 },
  { path: SDD_FOLDERS.cas, mode: 0o755 },
  { path: SDD_FOLDERS.lineage, mode: 0o700 },
  { path: SDD_FOLDERS.agents, mode: 0o755 },
  { path: SDD_FOLDERS.keys, mode: 0o700 },
  { path: `${SDD_FOLDERS.keys}/agents`, mode: 0o700 },
  { path: `${SDD_FOLDERS.backlog}/open`, mode: 0o755 },
  { path: SDD_FOLDERS.runs, mode: 0o755 },
  { path: SDD_FOLDERS.runtime, mode: 0o700 },
  { path: SDD_FOLDERS.worktrees, mode: 0o755 },
];

/** `.sdd/.gitignore`: disposable state and private keys never reach git. */
export const SDD_GITIGNORE =
  "# Written by bernstein init: disposable state and private keys stay out of git.\n" +
  "runtime/\nworktrees/\nkeys/\n";

function commented(text: string): string {
  return text.trimEnd().split("\n").map((l) => `# ${l}`).join("\n") + "\n";
}

/** `.sdd/config.yaml` as init writes it: every tunable documented, all commented out. */
export async function workspaceConfigTemplate(): Promise<string> {
  // Loaded here, not by every bernstein start: the yaml package costs ~70 ms of CPU to evaluate.
  const { stringify } = await import("yaml");
  return "# Workspace runtime defaults (lowest file layer; bernstein.yaml and overlays win).\n" +
    "# 'bernstein config set KEY VALUE' writes here. Built-in defaults, for reference:\n#\n" +
    commented(stringify({ tuning: DEFAULT_TUNING }));
}

/** The commented `bernstein.yaml` template. */
export const PROJECT_TEMPLATE =
  `# bernstein.yaml — project configuration (tracked). Run 'bernstein config validate'.
# Sandboxed runs: put local changes in .git/bernstein-overlay.yaml or BERNSTEIN_CONFIG_OVERRIDE
# instead of editing this file.

# goal: "Add input validation to the signup form"
# cli: auto            # adapter for every role unless role_model_policy says otherwise
# max_agents: 4        # agents running at once

# role_model_policy:
#   backend:
#     cli: claude
#     model: sonnet
#     effort: high
#     ladder: [{ model: opus }]

# isolation: auto      # agents in a sandbox where one works (bwrap, sandbox-exec); sandbox | none
# network:
#   egress: ["pypi.org", "*.npmjs.org"]   # more hosts agents may reach through the egress proxy
# sandbox:
#   read_only: ["/srv/tools"]             # more folders agents see read-only

# quality_gates:
#   run_config: true   # refuse diffs that touch bernstein's own config
#   secrets: true      # refuse diffs that carry a token, key or private key block
#   tests: { command: ["deno", "task", "test"], timeout_s: 600 }
#   lint: { command: ["deno", "lint"] }

# policy:              # tool-call policy; rules in .bernstein/ (docs/POLICY.md)
#   enabled: true
#   unenforced: warn   # refuse: do not start agents whose CLI has no pre-tool hook

# lineage:
#   enabled: true
#   strict: false      # true: a write whose lineage cannot be recorded is refused

# compliance:
#   risk_paths: ["src/payments/**", "migrations/**"]
`;

/** What {@linkcode initWorkspace} did. */
export interface InitReport {
  /** Paths created (relative to the project root). */
  created: string[];
  /** Paths that already existed and were left alone. */
  kept: string[];
}

/**
 * Creates the `.sdd/` layout, `.sdd/config.yaml`, `.sdd/install_id`, `.sdd/.gitignore` and a
 * commented `bernstein.yaml` (unless `projectTemplate: false`: a run never adds files to the
 * work tree outside `.sdd/`). Adds the disposable paths to the repository's `info/exclude`.
 * Idempotent: existing files are never overwritten.
 */
export async function initWorkspace(
  project: ProjectPaths,
  random: Random,
  options: { projectTemplate?: boolean } = {},
): Promise<InitReport> {
  const report: InitReport = { created: [], kept: [] };
  for (const folder of INIT_FOLDERS) {
    const path = join(project.sdd, folder.path);
    const shown = join(SDD_DIR, folder.path) + "/";
    try {
      await Deno.mkdir(path, { mode: folder.mode });
      report.created.push(shown);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        if (error instanceof Deno.errors.NotFound) {
          await Deno.mkdir(path, { recursive: true, mode: folder.mode });
          report.created.push(shown);
          continue;
        }
        throw error;
      }
      report.kept.push(shown);
    }
  }
  const files: { rel: string; content: () => string | Promise<string>; mode?: number }[] = [
    { rel: ".sdd/config.yaml", content: workspaceConfigTemplate },
    { rel: ".sdd/.gitignore", content: () => SDD_GITIGNORE },
    { rel: ".sdd/install_id", content: () => toHex(random.bytes(8)), mode: 0o644 },
    { rel: "bernstein.yaml", content: () => PROJECT_TEMPLATE },
  ];
  for (const f of files) {
    const path = join(project.root, f.rel);
    if (f.rel === "bernstein.yaml" && options.projectTemplate === false) continue;
    if (f.rel === "bernstein.yaml") {
      const yml = await Deno.stat(join(project.root, "bernstein.yml")).then(
        () => true,
        () => false,
      );
      if (yml) {
        report.kept.push("bernstein.yml");
        continue;
      }
    }
    // Most runs find the files there: the content (the config template needs the yaml package)
    // is made only for a file that is missing. writeFileIfAbsent still refuses to overwrite.
    if (await pathExists(path)) {
      report.kept.push(f.rel);
      continue;
    }
    const created = await writeFileIfAbsent(path, await f.content(), { mode: f.mode });
    (created ? report.created : report.kept).push(f.rel);
  }
  if (project.gitDir !== undefined) await excludeRuntimePaths(project.gitDir);
  return report;
}

/**
 * Paths git must never show or stage: disposable state, worktrees, private keys, and the MCP
 * configuration Claude Code reads from a fixed path in the work tree.
 */
export const EXCLUDED_PATHS: readonly string[] = [
  ".sdd/runtime/",
  ".sdd/worktrees/",
  ".sdd/keys/",
  ...EXCLUDED_RUN_CONFIG,
];

async function excludeRuntimePaths(gitDir: string): Promise<void> {
  await excludeFromGit(gitDir, EXCLUDED_PATHS);
}

/**
 * Adds `paths` (git's exclude syntax) to the repository's `info/exclude`, once each; a linked
 * worktree's git dir writes the shared one's.
 */
export async function excludeFromGit(gitDir: string, paths: readonly string[]): Promise<void> {
  // A linked worktree's git dir holds a `commondir` file pointing at the shared one.
  let common = gitDir;
  try {
    common = join(gitDir, (await Deno.readTextFile(join(gitDir, "commondir"))).trim());
  } catch {
    // Not a linked worktree.
  }
  const path = join(common, "info", "exclude");
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(join(common, "info"), { recursive: true });
  }
  const lines = new Set(text.split("\n").map((l) => l.trim()));
  const missing = paths.filter((p) => !lines.has(p));
  if (missing.length === 0) return;
  const prefix = text === "" || text.endsWith("\n") ? "" : "\n";
  await Deno.writeTextFile(
    path,
    `${prefix}# bernstein: disposable run state and run configuration\n${missing.join("\n")}\n`,
    { append: true },
  );
}
