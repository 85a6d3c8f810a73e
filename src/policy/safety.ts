// The two tiers no rule can override. IMMUNE: writes and deletes of bernstein's own state
// (.sdd/), git's (.git/), the policy's rules (.bernstein/), the agent CLIs' configuration
// (in the worktree and the agent's home) and key files. SAFETY: secrets (reading key and
// token files, or a call that carries a private key, a provider token or one of the run's
// own tokens) and the integrity guards an `ask` stands on.
import { dirname, isAbsolute, join, relative } from "node:path";
import { AGENT_CONFIG_PATHS, MCP_CONFIG_FILES, POLICY_DIR } from "../config/mod.ts";
import { runtimeDir, sddFolder } from "../io/mod.ts";
import type { IntegrityGuard } from "./contract.ts";
import { analyseShell, type ShellWord } from "./shell.ts";
import {
  absolutePath,
  callCommand,
  callPaths,
  type CallPlace,
  inputStrings,
  type ToolCall,
  toolFamily,
} from "./tool_call.ts";

/** The places that matter to the immune and safety tiers; all absolute. */
export interface ProtectedPlaces extends CallPlace {
  /** Repository root (the checkout merges go into). */
  root?: string;
  /** The project's `.sdd/` folder. */
  sdd?: string;
  /** The operator's own home (its `.ssh`, the audit key's default folder). */
  userHome?: string;
  /** The agent CLI's transcript file, when the hook input names it. */
  transcriptPath?: string;
  /** More files or folders that hold secrets (the audit key file, the operator key). */
  secretFiles?: readonly string[];
  /** Secret values that must never appear in a call (the run's tokens). 16 chars or more. */
  secretValues?: readonly string[];
}

/** What the immune and safety tiers found. */
export interface SafetyFindings {
  /** Immune-path violations, one message each. */
  immune: string[];
  /** Secrets, one message each. */
  secrets: string[];
  /** Integrity guards that fired, each with its messages. */
  guards: Map<IntegrityGuard, string[]>;
}

/** Agent CLI and MCP configuration in a project (the config's one list; no trailing `/`). */
const PROJECT_AGENT_CONFIG = [...AGENT_CONFIG_PATHS, ...MCP_CONFIG_FILES].map((p) =>
  p.replace(/\/$/, "")
);
const POLICY = POLICY_DIR.replace(/\/$/, "");

/** Where agent CLIs keep transcripts and sessions under their home. */
const TRANSCRIPT_DIRS = [
  ".claude/projects",
  ".claude/todos",
  ".codex/sessions",
  ".gemini/tmp",
  ".qwen/projects",
  ".qwen/tmp",
  ".local/share/opencode",
];
/** Secret folders and files under the operator's home. */
const USER_SECRETS = [".ssh", ".aws", ".gnupg", ".config/gcloud", ".local/state/bernstein"];

const SECRET_PATTERNS: readonly { name: string; re: RegExp }[] = [
  {
    name: "a private key",
    re: /-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----/,
  },
  { name: "an AWS access key", re: /\b(?:AKIA|ASIA)(?!IOSFODNN7EXAMPLE)[0-9A-Z]{16}\b/ },
  { name: "a GitHub token", re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})/ },
  { name: "an Anthropic key", re: /\bsk-ant-[A-Za-z0-9_-]{20,}/ },
  { name: "an OpenAI key", re: /\bsk-(?:proj-)?[A-Za-z0-9]{32,}/ },
  { name: "a Slack token", re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/ },
  { name: "a Google API key", re: /\bAIza[0-9A-Za-z_-]{35}\b/ },
];

const within = (p: string, dir: string | undefined) =>
  dir !== undefined && (p === dir || p.startsWith(dir.endsWith("/") ? dir : dir + "/"));

function label(p: string, places: ProtectedPlaces): string {
  const rel = relative(places.cwd, p);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? p : rel;
}

/** Why a path is a secret, or undefined. */
export function secretPath(p: string, places: ProtectedPlaces): string | undefined {
  if (within(p, places.sdd && sddFolder(places.sdd, "keys"))) return "bernstein's private keys";
  if (within(p, places.sdd && join(runtimeDir(places.sdd), "tokens"))) return "agent tokens";
  if (places.sdd && p === join(runtimeDir(places.sdd), "auth.token")) return "the operator token";
  for (const f of places.secretFiles ?? []) if (within(p, f)) return "a key file";
  for (const d of USER_SECRETS) {
    if (places.userHome !== undefined && within(p, `${places.userHome}/${d}`)) {
      return `the operator's ${d}`;
    }
  }
  return undefined;
}

/** Why writing a path is forbidden, or undefined. */
export function immunePath(p: string, places: ProtectedPlaces): string | undefined {
  if (p.split("/").includes(".git")) return ".git/ is git's own state";
  for (const base of [places.cwd, places.root]) {
    if (base === undefined) continue;
    if (within(p, `${base}/${POLICY}`)) return `${POLICY}/ holds the tool-call policy`;
    for (const name of PROJECT_AGENT_CONFIG) {
      if (within(p, `${base}/${name}`)) return `${name} is agent CLI configuration`;
    }
  }
  const secret = secretPath(p, places);
  if (secret !== undefined) return `it holds ${secret}`;
  if (within(p, places.home)) {
    if (within(p, `${places.home}/tmp`) || transcript(p, places)) return undefined;
    return "the agent's home holds its CLI configuration and policy hook";
  }
  if (within(p, places.sdd) && !within(p, places.cwd)) return ".sdd/ is bernstein's state";
  return undefined;
}

function transcript(p: string, places: ProtectedPlaces): boolean {
  if (places.transcriptPath !== undefined && p === places.transcriptPath) return true;
  return places.home !== undefined && TRANSCRIPT_DIRS.some((d) => within(p, `${places.home}/${d}`));
}

/** Why a recursive delete of `p` is dangerous, or undefined. */
function dangerousDelete(p: string, places: ProtectedPlaces): string | undefined {
  if (p === "/" || dirname(p) === "/") return "a system folder";
  for (
    const [dir, what] of [
      [places.userHome, "the home folder"],
      [places.home, "the agent's home"],
      [places.root, "the repository"],
      [places.cwd, "the worktree"],
    ] as const
  ) {
    if (dir !== undefined && (p === dir || within(dir, p))) return `${what} (or a folder above it)`;
  }
  if (p.split("/").includes(".git")) return "git's state";
  if (within(p, places.home ? `${places.home}/tmp` : undefined)) return undefined;
  if (within(p, places.sdd) && !within(p, places.cwd)) return "bernstein's state";
  if (!within(p, places.cwd)) return "a place outside the worktree";
  return undefined;
}

function addGuard(f: SafetyFindings, guard: IntegrityGuard, message: string): void {
  const list = f.guards.get(guard) ?? [];
  list.push(message);
  f.guards.set(guard, list);
}

function checkWrite(p: string, places: ProtectedPlaces, f: SafetyFindings, verb: string): void {
  const why = immunePath(p, places);
  if (why !== undefined) f.immune.push(`${verb} ${label(p, places)}: ${why}`);
  else if (transcript(p, places)) {
    addGuard(f, "transcript_write", `${verb} ${label(p, places)}: the agent CLI's own record`);
  }
}

function checkRead(p: string, places: ProtectedPlaces, f: SafetyFindings): void {
  const secret = secretPath(p, places);
  if (secret !== undefined) f.secrets.push(`reads ${label(p, places)}: ${secret}`);
  else if (within(p, places.sdd) && !within(p, places.cwd) && !within(p, places.home)) {
    addGuard(f, "artifact_shared_read", `reads ${label(p, places)}: shared run state in .sdd/`);
  }
}

function checkContent(call: ToolCall, places: ProtectedPlaces, f: SafetyFindings): void {
  for (const { field, value } of inputStrings(call.input)) {
    for (const { name, re } of SECRET_PATTERNS) {
      if (re.test(value)) f.secrets.push(`${field} carries ${name}`);
    }
    for (const secret of places.secretValues ?? []) {
      if (secret.length >= 16 && value.includes(secret)) {
        f.secrets.push(`${field} carries one of the run's tokens`);
      }
    }
  }
}

function checkShell(command: string, places: ProtectedPlaces, f: SafetyFindings): void {
  const facts = analyseShell(command);
  for (const problem of facts.problems) addGuard(f, "unverifiable_shell_text", problem);
  const abs = (w: ShellWord) => absolutePath(w.text, places);
  for (const target of facts.recursiveDeletes) {
    if (target.dynamic) {
      addGuard(f, "unverifiable_delete", `recursive delete of '${target.text}' (computed)`);
      continue;
    }
    const why = dangerousDelete(abs(target), places);
    if (why !== undefined) {
      addGuard(f, "dangerous_delete", `recursive delete of '${target.text}': ${why}`);
    }
  }
  for (const w of facts.writes) if (!w.dynamic) checkWrite(abs(w), places, f, "writes");
  for (const w of facts.reads) if (!w.dynamic) checkRead(abs(w), places, f);
  for (const w of facts.words) {
    if (w.dynamic || !(w.text.includes("/") || w.text.startsWith("."))) continue;
    const secret = secretPath(abs(w), places);
    if (secret !== undefined) f.secrets.push(`names ${w.text}: ${secret}`);
  }
}

/**
 * Runs the immune and safety tiers over one call.
 *
 * @example
 * ```ts
 * const places = { cwd: "/r/.sdd/worktrees/s1", root: "/r", sdd: "/r/.sdd" };
 * checkSafety({ tool: "Write", input: { file_path: "/r/.git/hooks/pre-commit" } }, places)
 *   .immune; // ["writes /r/.git/hooks/pre-commit: .git/ is git's own state"]
 * checkSafety({ tool: "Bash", input: { command: "rm -rf /" } }, places)
 *   .guards.has("dangerous_delete"); // true
 * ```
 */
export function checkSafety(call: ToolCall, places: ProtectedPlaces): SafetyFindings {
  const f: SafetyFindings = { immune: [], secrets: [], guards: new Map() };
  const family = toolFamily(call.tool);
  const paths = callPaths(call).map((p) => absolutePath(p, places));
  switch (family) {
    case "write":
    case "edit":
      for (const p of paths) checkWrite(p, places, f, "writes");
      break;
    case "delete":
      for (const p of paths) checkWrite(p, places, f, "deletes");
      break;
    case "read":
    case "grep":
    case "glob":
    case "list":
      for (const p of paths.length > 0 ? paths : [places.cwd]) checkRead(p, places, f);
      break;
    case "bash": {
      const command = callCommand(call);
      if (command === undefined) addGuard(f, "unverifiable_shell_text", "no command text");
      else checkShell(command, places, f);
      break;
    }
  }
  checkContent(call, places, f);
  return f;
}
