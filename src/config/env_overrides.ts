// The `BERNSTEIN_*` environment variables that override configuration keys: one table, read
// into a layer of the configuration with each variable named in errors.

import type { EnvReader } from "../io/mod.ts";
import type { ConfigProblem } from "./errors.ts";
import { setPath } from "./merge.ts";

/** How an environment value is validated. */
type EnvKind = "positive-int" | "positive" | "string" | "boolean";

/** One `BERNSTEIN_*` variable that overrides a config key. */
export interface EnvOverride {
  /** Variable name. */
  name: string;
  /** Config key it sets. */
  path: readonly string[];
  /** Accepted values. */
  kind: EnvKind;
  /** One line for docs and `config list`. */
  help: string;
}

/** Every individual environment override, checked before the YAML layers' values. */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  {
    name: "BERNSTEIN_MAX_AGENTS",
    path: ["max_agents"],
    kind: "positive-int",
    help: "parallel agents",
  },
  { name: "BERNSTEIN_CLI", path: ["cli"], kind: "string", help: "default adapter" },
  {
    name: "BERNSTEIN_ISOLATION",
    path: ["isolation"],
    kind: "string",
    help: "agent isolation: auto, sandbox or none",
  },
  {
    name: "BERNSTEIN_MAX_TURNS",
    path: ["tuning", "agent", "max_turns"],
    kind: "positive-int",
    help: "agent turn limit",
  },
  {
    name: "BERNSTEIN_STALL_THRESHOLD_S",
    path: ["tuning", "orchestrator", "stalled_manager_threshold_s"],
    kind: "positive",
    help: "seconds a manager may run without creating a task before the run aborts",
  },
  {
    name: "BERNSTEIN_STALLED_RUN_GRACE_S",
    path: ["tuning", "orchestrator", "stalled_run_grace_s"],
    kind: "positive",
    help: "backstop grace for a run that makes no progress",
  },
  {
    name: "BERNSTEIN_STALLED_RUN_TICKS",
    path: ["tuning", "orchestrator", "stalled_run_ticks"],
    kind: "positive",
    help: "backstop minimum ticks",
  },
  {
    name: "BERNSTEIN_INTERNAL_LLM_PROVIDER",
    path: ["internal_llm_provider"],
    kind: "string",
    help: "provider for bernstein's own LLM calls",
  },
  {
    name: "BERNSTEIN_INTERNAL_LLM_MODEL",
    path: ["internal_llm_model"],
    kind: "string",
    help: "model for bernstein's own LLM calls",
  },
  {
    name: "BERNSTEIN_LINEAGE_STRICT",
    path: ["lineage", "strict"],
    kind: "boolean",
    help: "refuse writes whose lineage fails",
  },
  {
    name: "BERNSTEIN_DATABASE_URL",
    path: ["storage", "database_url"],
    kind: "string",
    help: "PostgreSQL URL of the shared task store (keeps the password out of files)",
  },
  {
    name: "BERNSTEIN_REDIS_URL",
    path: ["storage", "redis_url"],
    kind: "string",
    help: "Redis URL for claim locks and wake-ups (storage.backend: redis)",
  },
  {
    name: "BERNSTEIN_SYNC_GITHUB_BACKLOG",
    path: ["github", "sync_backlog"],
    kind: "boolean",
    help: "sync GitHub issues into the backlog",
  },
];

const KIND_TEXT: Record<EnvKind, string> = {
  "positive-int": "a positive integer",
  "positive": "a positive finite number",
  "string": "a non-empty string",
  "boolean": "one of 1, 0, true, false, yes, no",
};

function parseEnvValue(kind: EnvKind, text: string): unknown {
  const trimmed = text.trim();
  switch (kind) {
    case "positive-int": {
      if (!/^\+?[0-9]+$/.test(trimmed)) return undefined;
      const n = Number(trimmed);
      return Number.isSafeInteger(n) && n > 0 ? n : undefined;
    }
    case "positive": {
      // Number("") is 0 and Number("0x10") is 16: accept only plain decimal notation.
      if (!/^\+?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(trimmed)) return undefined;
      const n = Number(trimmed);
      return Number.isFinite(n) && n > 0 ? n : undefined;
    }
    case "string":
      return trimmed === "" ? undefined : trimmed;
    case "boolean": {
      const lower = trimmed.toLowerCase();
      if (["1", "true", "yes", "on"].includes(lower)) return true;
      if (["0", "false", "no", "off"].includes(lower)) return false;
      return undefined;
    }
  }
}

/**
 * Reads every {@linkcode ENV_OVERRIDES} variable. A value that does not validate is dropped
 * with a warning, so the next tier's value applies — a bad value never disables a watchdog.
 */
export function readEnvOverrides(env: EnvReader): {
  raw: Record<string, unknown>;
  setBy: Map<string, string>;
  problems: ConfigProblem[];
} {
  let raw: Record<string, unknown> = {};
  const setBy = new Map<string, string>();
  const problems: ConfigProblem[] = [];
  for (const o of ENV_OVERRIDES) {
    const text = env.get(o.name);
    if (text === undefined) continue;
    const value = parseEnvValue(o.kind, text);
    if (value === undefined) {
      problems.push({
        severity: "warning",
        code: "config.env_invalid",
        message: `${o.name}=${JSON.stringify(text)} is not ${KIND_TEXT[o.kind]}; ignored, ` +
          `${o.path.join(".")} comes from the next layer`,
        location: o.name,
      });
      continue;
    }
    raw = setPath(raw, o.path, value);
    setBy.set(o.path.join("."), `env:${o.name}`);
  }
  return { raw, setBy, problems };
}
