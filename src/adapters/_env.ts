// The child environment of an agent: the base allowlist, HOME/XDG under the spawn's home, and
// how endpoint profiles are checked and their keys read.
import { join } from "node:path";
import { buildChildEnv } from "../io/mod.ts";
import { AdapterError } from "./errors.ts";
import { type EndpointApi, type EndpointProfile, type InvocationInput } from "./types.ts";

/** Variables every agent gets when set (HOME and the XDG dirs are always replaced). */
export const BASE_ENV: readonly string[] = ["PATH", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME"];

/** Placeholder key for local endpoints that need none (the CLIs refuse to start without one). */
export const LOCAL_PLACEHOLDER_KEY = "bernstein-local";

/**
 * The child environment: base allowlist + the adapter's names + `settings.env`, read through
 * the injected reader, then HOME/XDG pointing into the spawn's home, the orchestrator's
 * extras, and the adapter's own values (which win).
 */
export function childEnv(
  names: readonly string[],
  input: InvocationInput,
  own: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const allow = [...BASE_ENV, ...names, ...(input.settings?.env ?? [])];
  const home = input.home;
  return buildChildEnv(allow, input.env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    TMPDIR: join(home, "tmp"),
    ...(input.extra_env ?? {}),
    ...own,
  });
}

/**
 * Adapters that also give an endpoint profile's `timeout` to their CLI (claude `API_TIMEOUT_MS`
 * and `CLAUDE_STREAM_IDLE_TIMEOUT_MS`, codex `stream_idle_timeout_ms`, qwen
 * `model.generationConfig.timeout`, opencode/ollama provider `options.timeout`, aider
 * `--timeout`). The run's watchdog enforces it for every CLI (an agent silent that long is
 * stopped): a CLI setting does not always end a stream that hangs after its headers.
 */
export const ENDPOINT_TIMEOUT_NATIVE: readonly string[] = [
  "claude",
  "codex",
  "qwen",
  "opencode",
  "ollama",
  "aider",
];

/** The endpoint's timeout in milliseconds, when it sets one. */
export function endpointTimeoutMs(endpoint: EndpointProfile | undefined): number | undefined {
  return endpoint?.timeout === undefined ? undefined : Math.round(endpoint.timeout * 1000);
}

/** Refuses an endpoint whose API the CLI cannot speak. */
export function requireEndpointApi(
  adapter: string,
  endpoint: EndpointProfile,
  accepted: readonly EndpointApi[],
): void {
  if (endpoint.api !== undefined && !accepted.includes(endpoint.api)) {
    throw new AdapterError(
      "adapter.endpoint_unsupported",
      `${adapter} cannot use endpoint '${endpoint.name}': it speaks ${endpoint.api}, ` +
        `${adapter} needs ${accepted.join(" or ")}`,
      { location: `local_endpoints.${endpoint.name}.api` },
    );
  }
}

/** Refuses any endpoint (for CLIs that cannot be pointed at one). */
export function refuseEndpoint(adapter: string, input: InvocationInput): void {
  if (input.endpoint === undefined) return;
  throw new AdapterError(
    "adapter.endpoint_unsupported",
    `${adapter} cannot be pointed at endpoint '${input.endpoint.name}': the CLI has no ` +
      "setting for a custom model server",
    { hint: "use claude, codex, gemini, qwen, opencode, aider, goose or ollama for endpoints" },
  );
}

/** The API key for an endpoint: its `api_key_env` value, or the local placeholder. */
export function endpointKey(input: InvocationInput, endpoint: EndpointProfile): string {
  if (endpoint.api_key_env === undefined) return LOCAL_PLACEHOLDER_KEY;
  const value = input.env.get(endpoint.api_key_env);
  if (value === undefined || value === "") {
    throw new AdapterError(
      "adapter.endpoint_key_missing",
      `endpoint '${endpoint.name}' needs \$${endpoint.api_key_env}, which is not set`,
      {
        location: `local_endpoints.${endpoint.name}.api_key_env`,
        hint: "the bernstein binary reads only the variables its env permission lists " +
          "(deno.json permissions.bernstein.env)",
      },
    );
  }
  return value;
}
