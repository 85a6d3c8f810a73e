/**
 * The one list of run-configuration paths: files that decide how bernstein and its agents
 * run (its configuration, MCP servers, the tool-call policy, agent CLI configuration, its
 * state). Three guards read it, and the policy's immune tier reads the same lists, so they cannot drift apart: the `run_config` gate refuses an
 * agent diff that touches one, the branch guard does not count local edits to them as a dirty
 * tree (merges never touch them), and `.claude/mcp.json` — written into the work tree because
 * Claude Code reads it from a fixed path — is kept out of git with `info/exclude`.
 */

/** Where the project configuration may live; the loader reads exactly one of them. */
export const PROJECT_CONFIG_FILES: readonly string[] = [
  "bernstein.yaml",
  "bernstein.yml",
  ".bernstein/bernstein.yaml",
  ".bernstein/bernstein.yml",
];

/** MCP server configuration: an agent editing it could grant itself tools. */
export const MCP_CONFIG_FILES: readonly string[] = [".mcp.json", ".claude/mcp.json"];

/** bernstein's state folder (audit chain, lineage, keys, workspace config). */
export const STATE_DIR = ".sdd/";

/** The tool-call policy's rules (docs/POLICY.md): an agent editing them could allow itself anything. */
export const POLICY_DIR = ".bernstein/";

/**
 * Agent CLI configuration a project can carry (folders end with `/`): an agent editing it could
 * switch the next agent's pre-tool hook off or give it tools.
 */
export const AGENT_CONFIG_PATHS: readonly string[] = [
  ".claude/",
  ".codex/",
  ".gemini/",
  ".qwen/",
  ".opencode/",
  "opencode.json",
  "opencode.jsonc",
];

/** Repo-relative files (not folders) of run configuration. */
export const RUN_CONFIG_FILES: readonly string[] = [...PROJECT_CONFIG_FILES, ...MCP_CONFIG_FILES];

/** Run-configuration paths written into a work tree that git must never show or stage. */
export const EXCLUDED_RUN_CONFIG: readonly string[] = [".claude/mcp.json"];

/** True for a repo-relative path (forward slashes) that is run configuration or state. */
export function isRunConfigPath(path: string): boolean {
  const clean = path.replace(/^\.\//, "");
  return RUN_CONFIG_FILES.includes(clean) || clean.startsWith(STATE_DIR) ||
    clean.startsWith(POLICY_DIR) ||
    AGENT_CONFIG_PATHS.some((p) => (p.endsWith("/") ? clean.startsWith(p) : clean === p));
}
