/**
 * Hot reload: each scheduler tick looks at the configuration files a run read (project file,
 * overlay, `.sdd/config.yaml`); when one changed, the configuration is loaded again with the
 * same flags and plan defaults. Keys the schema marks reloadable (`RELOADABLE_KEYS`: agents at
 * once, every tunable, role policies for tasks not yet spawned) take effect on this tick;
 * others are reported once as waiting for the next run. An edit that fails validation is
 * reported once and the running configuration is kept. Every reload is an audit event with the
 * old and new configuration hashes.
 */
import { canonicalize } from "../canonical/mod.ts";
import {
  type Config,
  type ConfigProblem,
  type ConfigSourceFile,
  isPlainObject,
  loadConfig,
  type LoadConfigOptions,
  RELOADABLE_KEYS,
} from "../config/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { BernsteinError } from "../errors/mod.ts";

/** What a tick's look at the configuration found. */
export type ReloadOutcome =
  | {
    kind: "reloaded";
    /** The new effective configuration. */
    config: Config;
    /** `sha256:` of the canonical configuration before and after. */
    oldHash: string;
    newHash: string;
    /** Reloadable keys that changed (applied now). */
    applied: string[];
    /** Other keys that changed (they wait for the next run). */
    pending: string[];
  }
  | {
    kind: "refused";
    /** The first error of the edited configuration (the old one stays). */
    problem: ConfigProblem;
    /** How many errors it has. */
    errors: number;
  };

/** The refusal when loading failed without naming an error. */
const INVALID: ConfigProblem = { severity: "error", code: "config.invalid", message: "invalid" };

/** `sha256:<hex>` of a configuration's canonical JSON. */
export function configHash(config: Config): string {
  return "sha256:" +
    sha256Hex(new TextEncoder().encode(canonicalize(config, "canon")));
}

function leaves(value: unknown, prefix: string, out: Map<string, string>): void {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length > 0) {
      for (const [k, v] of entries) leaves(v, prefix ? `${prefix}.${k}` : k, out);
      return;
    }
  }
  out.set(prefix, JSON.stringify(value ?? null));
}

/** Dotted keys whose values differ between two configurations. */
export function changedKeys(before: Config, after: Config): string[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  leaves(before, "", a);
  leaves(after, "", b);
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => a.get(k) !== b.get(k)).sort();
}

function reloadable(key: string): boolean {
  return RELOADABLE_KEYS.some((r) => key === r || key.startsWith(r + "."));
}

async function stampOf(files: readonly ConfigSourceFile[]): Promise<string> {
  const parts: string[] = [];
  for (const f of files) {
    if (f.path === undefined) continue;
    const info = await Deno.stat(f.path).catch(() => undefined);
    parts.push(`${f.path}\0${info ? `${info.mtime?.getTime() ?? 0}:${info.size}` : "absent"}`);
  }
  return parts.join("\n");
}

/** Watches a run's configuration files and reloads them when they change. */
export class ConfigWatch {
  readonly #options: LoadConfigOptions;
  readonly #files: readonly ConfigSourceFile[];
  #config: Config;
  #stamp: string | undefined;
  /** Stamp of files whose refusal was already reported (reported once, not every tick). */
  #refusedStamp: string | undefined;

  readonly #adjust: (config: Config) => Config;

  /** `adjust` is applied to every reloaded configuration, as the run applied it at start. */
  constructor(
    options: LoadConfigOptions,
    loaded: { config: Config; sourceFiles: readonly ConfigSourceFile[] },
    adjust: (config: Config) => Config = (c) => c,
  ) {
    this.#options = options;
    this.#adjust = adjust;
    this.#files = loaded.sourceFiles;
    this.#config = loaded.config;
  }

  /** The configuration in force. */
  get config(): Config {
    return this.#config;
  }

  /** Looks at the files; reloads when they changed. Undefined when nothing happened. */
  async check(): Promise<ReloadOutcome | undefined> {
    const stamp = await stampOf(this.#files);
    if (this.#stamp === undefined) {
      this.#stamp = stamp;
      return undefined;
    }
    if (stamp === this.#stamp || stamp === this.#refusedStamp) return undefined;
    const loaded = await loadConfig(this.#options).catch((error: Error) => ({
      config: undefined,
      problems: [{
        ...INVALID,
        code: error instanceof BernsteinError ? error.code : INVALID.code,
        message: error.message,
      }],
    }));
    const errors = loaded.problems.filter((p) => p.severity === "error");
    if (errors.length > 0 || loaded.config === undefined) {
      this.#refusedStamp = stamp;
      return {
        kind: "refused",
        problem: errors[0] ?? INVALID,
        errors: errors.length,
      };
    }
    this.#stamp = stamp;
    this.#refusedStamp = undefined;
    const before = this.#config;
    const after = this.#adjust(loaded.config);
    const changed = changedKeys(before, after);
    if (changed.length === 0) return undefined;
    this.#config = after;
    return {
      kind: "reloaded",
      config: after,
      oldHash: configHash(before),
      newHash: configHash(after),
      applied: changed.filter(reloadable),
      pending: changed.filter((k) => !reloadable(k)),
    };
  }
}

/**
 * Puts the reloadable parts of `next` into the running configuration object itself (every
 * part of the run holds that one object, so each reads the new values from now on).
 */
export function applyReloadable(target: Config, next: Config): void {
  const t: Record<string, unknown> = target;
  const n: Record<string, unknown> = next;
  for (const key of RELOADABLE_KEYS) {
    const [head, sub] = key.split(".");
    if (sub === undefined) t[head] = n[head];
    else {
      const into = t[head];
      const from = n[head];
      if (isPlainObject(into) && isPlainObject(from)) into[sub] = from[sub];
    }
  }
}
