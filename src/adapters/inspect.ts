// What `bernstein adapters list|check` report: availability, version and the flag contract of
// each adapter, probed in a throwaway HOME so no CLI writes state into the operator's.
import type { EnvReader } from "../io/mod.ts";
import type { Capabilities } from "./capabilities.ts";
import { checkFlags, type FlagCheck, type ProbeRunner, probeVersion } from "./contract.ts";
import {
  ADAPTER_NAMES,
  type AdapterSettingsMap,
  checkAvailability,
  getAdapter,
} from "./registry.ts";
import type { PathLookup } from "./path_lookup.ts";
import type { ScriptedRuntime } from "./scripted.ts";
import type { PromptChannel } from "./types.ts";

/** One adapter as `adapters list` shows it. */
export interface AdapterReport {
  /** Adapter name. */
  name: string;
  /** One line. */
  summary: string;
  /** Executable it looks for. */
  binary: string;
  /** Resolves here. */
  available: boolean;
  /** Resolved executable. */
  path: string | null;
  /** Why it does not resolve. */
  reason: string | null;
  /** Version reported by the probe (null when unavailable or the probe failed). */
  version: string | null;
  /** Why the version probe failed. */
  version_error: string | null;
  /** How the prompt is passed. */
  prompt: PromptChannel;
  /** Its row of the capability table. */
  capabilities: Capabilities;
}

/** `adapters check`: the report plus the flag contract and a verdict. */
export interface AdapterCheck extends AdapterReport {
  /** Each relied-on flag. */
  flags: FlagCheck[];
  /** Flags that vanished from the installed CLI. */
  missing: string[];
  /** Binary found, version probed, no flag missing. */
  ok: boolean;
}

/** Options for {@linkcode inspectAdapter}. */
export interface InspectOptions {
  /** How binaries are found. */
  lookup: PathLookup;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettingsMap;
  /** The orchestrator's environment (PATH and LANG for the probes). */
  env: EnvReader;
  /** Deadline of each probe in ms. */
  timeoutMs: number;
  /** Probe runner (default: real processes). */
  runner?: ProbeRunner;
  /** Scripted agent locator (tests). */
  scripted?: () => Promise<ScriptedRuntime>;
}

async function withProbeHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const home = await Deno.makeTempDir({ prefix: "bernstein-probe-" });
  try {
    return await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

function probeEnv(env: EnvReader, home: string): Record<string, string> {
  const out: Record<string, string> = {
    HOME: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    XDG_CACHE_HOME: `${home}/.cache`,
    CODEX_HOME: `${home}/.codex`,
    CLAUDE_CONFIG_DIR: `${home}/.claude`,
    NO_COLOR: "1",
    TERM: "dumb",
  };
  for (const name of ["PATH", "LANG", "LC_ALL"]) {
    const v = env.get(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

async function report(
  name: string,
  options: InspectOptions,
  home: string,
  withFlags: boolean,
): Promise<AdapterCheck> {
  const adapter = getAdapter(name, options.settings);
  const found = await checkAvailability(name, options);
  const base: AdapterCheck = {
    name,
    summary: adapter.summary,
    binary: adapter.binary,
    available: found.available,
    path: found.path ?? null,
    reason: found.reason ?? null,
    version: null,
    version_error: null,
    prompt: adapter.prompt,
    capabilities: adapter.capabilities,
    flags: [],
    missing: [],
    ok: false,
  };
  if (!found.available || found.path === undefined) return base;
  const probe = {
    executable: found.path,
    env: probeEnv(options.env, home),
    timeoutMs: options.timeoutMs,
    runner: options.runner,
  };
  const version = await probeVersion(adapter, probe);
  base.version = version.version ?? null;
  base.version_error = version.error ?? null;
  if (withFlags) {
    base.flags = await checkFlags(adapter, probe);
    base.missing = base.flags.filter((f) => !f.present).map((f) => f.flag);
  }
  base.ok = base.version !== null && base.missing.length === 0;
  return base;
}

/** Every registered adapter: availability, version, capabilities (`adapters list`). */
export function inspectAdapters(options: InspectOptions): Promise<AdapterReport[]> {
  return withProbeHome(async (home) => {
    const reports = await Promise.all(
      ADAPTER_NAMES.map((name) => report(name, options, home, false)),
    );
    return reports.map(({ flags: _f, missing: _m, ok: _o, ...rest }) => rest);
  });
}

/** One adapter with its flag contract checked against the installed CLI (`adapters check`). */
export function checkAdapter(name: string, options: InspectOptions): Promise<AdapterCheck> {
  getAdapter(name, options.settings); // unknown names fail before any probe
  return withProbeHome((home) => report(name, options, home, true));
}
