// The table of agent adapters, the order `auto` prefers them in, and their availability on this
// machine.

import { closestMatch } from "../errors/mod.ts";
import { aider } from "./aider.ts";
import { amp } from "./amp.ts";
import { claude } from "./claude.ts";
import { codex } from "./codex.ts";
import { cursor } from "./cursor.ts";
import { AdapterError } from "./errors.ts";
import { gemini } from "./gemini.ts";
import { generic, genericAdapter } from "./generic.ts";
import { goose } from "./goose.ts";
import { ollama } from "./ollama.ts";
import { opencode } from "./opencode.ts";
import type { PathLookup } from "./path_lookup.ts";
import { qwen } from "./qwen.ts";
import { scripted, type ScriptedRuntime, scriptedRuntime } from "./scripted.ts";
import type { Adapter, AdapterSettings, EndpointApi, EndpointProfile } from "./types.ts";

/** Every registered adapter, in listing order. */
export const ADAPTERS: readonly Adapter[] = [
  claude,
  codex,
  gemini,
  qwen,
  opencode,
  aider,
  ollama,
  cursor,
  amp,
  goose,
  generic,
  scripted,
];

/** Registered adapter names. */
export const ADAPTER_NAMES: readonly string[] = ADAPTERS.map((a) => a.name);

/**
 * `cli: auto` takes the first of these whose binary resolves on PATH. Left out on purpose:
 * `ollama` (needs a running model server, not just a binary), `generic` (only what the
 * operator configured) and `scripted` (the test agent).
 */
export const AUTO_PREFERENCE: readonly string[] = [
  "claude",
  "codex",
  "gemini",
  "opencode",
  "qwen",
  "cursor",
  "amp",
  "goose",
  "aider",
];

/** `adapters.<name>` settings by adapter name (the config's `adapters` map). */
export type AdapterSettingsMap = Readonly<Record<string, AdapterSettings>>;

/** True for a registered adapter name. */
export function isAdapterName(name: string): boolean {
  return ADAPTER_NAMES.includes(name);
}

/**
 * The adapter registered as `name`, with its `adapters.<name>` settings applied (binary
 * override; the whole command for `generic`). Unknown names throw `adapter.unknown`.
 */
export function getAdapter(name: string, settings: AdapterSettingsMap = {}): Adapter {
  const base = ADAPTERS.find((a) => a.name === name);
  if (base === undefined) {
    const near = closestMatch(name, ADAPTER_NAMES);
    throw new AdapterError("adapter.unknown", `unknown adapter '${name}'`, {
      hint: `${near ? `did you mean '${near}'? ` : ""}registered: ${ADAPTER_NAMES.join(", ")}`,
    });
  }
  const own = settings[name];
  if (name === "generic") return genericAdapter(own);
  if (own?.binary !== undefined) return { ...base, binary: own.binary };
  return base;
}

/** Whether an adapter can run here. */
export interface Availability {
  /** Adapter name. */
  name: string;
  /** It resolves (binary on PATH, or Deno + script for `scripted`). */
  available: boolean;
  /** Absolute path of the executable to run when available. */
  path?: string;
  /** Why it is not available. */
  reason?: string;
}

/** Options for availability checks and CLI resolution. */
export interface AvailabilityOptions {
  /** How binaries are found. */
  lookup: PathLookup;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettingsMap;
  /** Locates the scripted agent (injected in tests; default: the real checkout). */
  scripted?: () => Promise<ScriptedRuntime>;
}

/** Checks whether one adapter resolves here. */
export async function checkAvailability(
  name: string,
  options: AvailabilityOptions,
): Promise<Availability> {
  const adapter = getAdapter(name, options.settings);
  if (name === "scripted") {
    const runtime = await (options.scripted ?? scriptedRuntime)();
    return runtime.ok
      ? { name, available: true, path: runtime.deno }
      : { name, available: false, reason: runtime.reason };
  }
  if (name === "generic" && options.settings?.generic?.command === undefined) {
    return { name, available: false, reason: "adapters.generic.command is not set" };
  }
  const path = await options.lookup.which(adapter.binary);
  if (path === undefined) {
    return {
      name,
      available: false,
      reason: adapter.binary.includes("/")
        ? `${adapter.binary} is not an executable file`
        : `'${adapter.binary}' not found on PATH`,
    };
  }
  return { name, available: true, path };
}

/** Availability of every registered adapter, in registry order. */
export function checkAllAvailability(options: AvailabilityOptions): Promise<Availability[]> {
  return Promise.all(ADAPTER_NAMES.map((name) => checkAvailability(name, options)));
}

/** A resolved `cli` choice: the adapter (settings applied) and the executable to run. */
export interface ResolvedCli {
  /** The adapter. */
  adapter: Adapter;
  /** Absolute path of its executable. */
  executable: string;
  /** True when it was picked by `cli: auto`. */
  auto: boolean;
}

/** Options for {@linkcode resolveCli}. */
export interface ResolveCliOptions extends AvailabilityOptions {
  /** Where the name came from, for error messages (`role_model_policy.backend.cli`). */
  location?: string;
}

function workingList(all: readonly Availability[]): string {
  const names = all.filter((a) => a.available).map((a) => a.name);
  return names.length > 0 ? names.join(", ") : "none (no agent CLI found on PATH)";
}

/**
 * Resolves a `cli` setting to a runnable adapter. `auto` takes the first available adapter
 * of {@linkcode AUTO_PREFERENCE}. An unknown or unavailable name is refused with the list of
 * adapters that would work; there is never a silent fallback.
 */
export async function resolveCli(
  requested: string,
  options: ResolveCliOptions,
): Promise<ResolvedCli> {
  const location = options.location;
  if (requested === "auto") {
    for (const name of AUTO_PREFERENCE) {
      const found = await checkAvailability(name, options);
      if (found.available && found.path !== undefined) {
        return { adapter: getAdapter(name, options.settings), executable: found.path, auto: true };
      }
    }
    throw new AdapterError(
      "adapter.none_available",
      `cli: auto found none of ${AUTO_PREFERENCE.join(", ")} on PATH`,
      { location, hint: "install one of them, or name an adapter ('bernstein adapters list')" },
    );
  }
  if (!isAdapterName(requested)) {
    const all = await checkAllAvailability(options);
    const near = closestMatch(requested, ADAPTER_NAMES);
    throw new AdapterError(
      "adapter.unknown",
      `unknown adapter '${requested}'; adapters that would work here: ${workingList(all)}`,
      { location, hint: near ? `did you mean '${near}'?` : undefined },
    );
  }
  const found = await checkAvailability(requested, options);
  if (!found.available || found.path === undefined) {
    const all = await checkAllAvailability(options);
    throw new AdapterError(
      "adapter.unavailable",
      `adapter '${requested}' cannot run: ${found.reason}; adapters that would work here: ${
        workingList(all)
      }`,
      { location },
    );
  }
  return {
    adapter: getAdapter(requested, options.settings),
    executable: found.path,
    auto: false,
  };
}

/** The parts of the configuration that choose a role's adapter and endpoint. */
export interface RoleConfig {
  /** Top-level `cli` (default adapter). */
  cli?: string;
  /** `role_model_policy`. */
  role_model_policy?: Readonly<Record<string, { cli?: string; endpoint?: string }>>;
  /** `local_endpoints`. */
  local_endpoints?: Readonly<
    Record<string, { base_url: string; api?: EndpointApi; api_key_env?: string; model?: string }>
  >;
}

/** The `cli` a role uses and where that came from (for error locations). */
export function cliForRole(config: RoleConfig, role: string): { cli: string; location: string } {
  const own = config.role_model_policy?.[role]?.cli;
  if (own !== undefined) return { cli: own, location: `role_model_policy.${role}.cli` };
  return { cli: config.cli ?? "auto", location: "cli" };
}

/** The endpoint profile of `role_model_policy.<role>.endpoint`, or undefined when none. */
export function endpointForRole(config: RoleConfig, role: string): EndpointProfile | undefined {
  const name = config.role_model_policy?.[role]?.endpoint;
  if (name === undefined) return undefined;
  const profile = config.local_endpoints?.[name];
  if (profile === undefined) {
    const known = Object.keys(config.local_endpoints ?? {});
    throw new AdapterError(
      "adapter.unknown_endpoint",
      `endpoint '${name}' is not defined under local_endpoints`,
      {
        location: `role_model_policy.${role}.endpoint`,
        hint: known.length > 0 ? `defined: ${known.join(", ")}` : "add it under local_endpoints",
      },
    );
  }
  return { name, ...profile };
}
