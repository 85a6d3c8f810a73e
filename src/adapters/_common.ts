// Pieces every adapter shares: the base env allowlist, tier/model resolution, endpoint keys,
// prompt-size rules and the result bookkeeping of the output parsers.
import { join } from "node:path";
import { buildChildEnv } from "../io/mod.ts";
import { AdapterError } from "./errors.ts";
import type {
  AgentResult,
  EndpointApi,
  EndpointProfile,
  ExitInfo,
  InvocationInput,
  ProgressEvent,
  TokenUsage,
} from "./types.ts";
import { type Tier, TIERS } from "./types.ts";

/** Variables every agent gets when set (HOME and the XDG dirs are always replaced). */
export const BASE_ENV: readonly string[] = ["PATH", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME"];

/** Placeholder key for local endpoints that need none (the CLIs refuse to start without one). */
export const LOCAL_PLACEHOLDER_KEY = "bernstein-local";

/**
 * Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); prompts above this size go
 * through stdin even for CLIs that normally take them in argv.
 */
export const ARGV_PROMPT_LIMIT = 96 * 1024;

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

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

/** True for `haiku`, `sonnet`, `opus`. */
export function isTier(model: string): model is Tier {
  return (TIERS as readonly string[]).includes(model);
}

/**
 * The concrete model for one spawn: a concrete `input.model` as given; a tier through the
 * adapter's table — except with an endpoint that names its model, where the endpoint's
 * model wins (tiers mean nothing on a local server); nothing → endpoint model or undefined.
 */
export function resolveModel(
  input: InvocationInput,
  models: Readonly<Record<Tier, string>> | null,
  notes: string[],
): string | undefined {
  const asked = input.model;
  const endpointModel = input.endpoint?.model;
  if (asked === undefined) return endpointModel;
  if (!isTier(asked)) return asked;
  if (endpointModel !== undefined) return endpointModel;
  if (models === null) {
    notes.push(`model tier '${asked}' ignored: this CLI chooses its own model`);
    return undefined;
  }
  return models[asked];
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
      { location: `local_endpoints.${endpoint.name}.api_key_env` },
    );
  }
  return value;
}

/** Prompt with the protocol text in front, for CLIs without a system-prompt flag. */
export function promptWithSystem(input: InvocationInput): string {
  return input.system_prompt ? `${input.system_prompt}\n\n${input.prompt}` : input.prompt;
}

/** True when a prompt is too large for one argv element. */
export function tooLongForArgv(prompt: string): boolean {
  return utf8(prompt).length > ARGV_PROMPT_LIMIT;
}

/** Notes for options the CLI has no way to honour (never silently dropped). */
export function noteUnsupported(
  adapter: string,
  input: InvocationInput,
  unsupported: { effort?: boolean; max_turns?: boolean; system_prompt?: boolean },
  notes: string[],
): void {
  if (unsupported.effort && input.effort !== undefined) {
    notes.push(`effort '${input.effort}' ignored: ${adapter} has no effort setting`);
  }
  if (unsupported.max_turns && input.max_turns !== undefined) {
    notes.push(`max_turns ${input.max_turns} not enforced by ${adapter}; the deadline applies`);
  }
  if (unsupported.system_prompt && input.system_prompt) {
    notes.push(
      `${adapter} has no system-prompt flag: the protocol text is prepended to the prompt`,
    );
  }
}

/** The adapter's executable: the resolved path, the `binary` setting, or its own name. */
export function executable(input: InvocationInput, binary: string): string {
  return input.executable ?? input.settings?.binary ?? binary;
}

/** Extra args from settings. */
export function extraArgs(input: InvocationInput): string[] {
  return [...(input.settings?.extra_args ?? [])];
}

/** Parses one JSON line into an object, or undefined for anything else. */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/** A property as an object. */
export function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/** A property as a string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A property as a finite number. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A property as an array. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const CLIP = 2000;

/** Clips long text for progress events. */
export function clip(text: string): string {
  return text.length > CLIP ? `${text.slice(0, CLIP)}…` : text;
}

/** Adds token counts. */
export function addTokens(a: TokenUsage | null, b: TokenUsage): TokenUsage {
  if (a === null) return { ...b };
  const out: TokenUsage = { input: a.input + b.input, output: a.output + b.output };
  const cr = (a.cache_read ?? 0) + (b.cache_read ?? 0);
  const cw = (a.cache_write ?? 0) + (b.cache_write ?? 0);
  if (a.cache_read !== undefined || b.cache_read !== undefined) out.cache_read = cr;
  if (a.cache_write !== undefined || b.cache_write !== undefined) out.cache_write = cw;
  return out;
}

/**
 * The `subtype` every parser reports when it recognises the CLI's own turn-limit ending
 * (claude's own name for it), so the run loop can tell "ran out of turns" from other failures.
 */
export const MAX_TURNS_SUBTYPE = "error_max_turns";

/**
 * Exit code gemini and qwen use when the session turn limit is reached (FatalTurnLimitedError);
 * qwen prints no result event then, only this code and a line on stderr.
 */
export const TURN_LIMIT_EXIT = 53;

/** What a parser accumulates while reading; `finishResult` turns it into an AgentResult. */
export interface ParseState {
  /** Final message when the CLI sent one explicitly. */
  final?: string;
  /** Last assistant text seen (summary fallback). */
  last_text?: string;
  /** Turns reported. */
  turns: number | null;
  /** Tokens reported. */
  tokens: TokenUsage | null;
  /** Cost reported. */
  cost_usd: number | null;
  /** Error the CLI reported. */
  error?: string;
  /** Result subtype. */
  subtype: string | null;
  /** Session id. */
  session_id: string | null;
  /** Last non-JSON line (summary fallback for plain-text CLIs). */
  last_raw?: string;
}

/** A fresh parse state. */
export function newState(): ParseState {
  return { turns: null, tokens: null, cost_usd: null, subtype: null, session_id: null };
}

function lastLine(text: string | undefined): string | undefined {
  const lines = (text ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.length > 0 ? lines[lines.length - 1] : undefined;
}

/** The final result from the parse state and the exit. */
export function finishResult(state: ParseState, exit: ExitInfo): AgentResult {
  let error: string | null = state.error ?? null;
  if (error === null && exit.timed_out) error = "killed at the deadline";
  if (error === null && exit.code !== 0) {
    const why = lastLine(exit.stderr) ?? state.last_raw;
    error = `exited with code ${exit.code}${why ? `: ${clip(why)}` : ""}`;
  }
  return {
    ok: exit.code === 0 && !exit.timed_out && state.error === undefined,
    summary: state.final ?? state.last_text ?? state.last_raw ?? "",
    turns: state.turns,
    tokens: state.tokens,
    cost_usd: state.cost_usd,
    error,
    subtype: state.subtype,
    session_id: state.session_id,
    exit_code: exit.code,
  };
}

/** A raw (unparsed) line as an event; remembers it as a summary fallback. */
export function rawEvent(state: ParseState, line: string): ProgressEvent[] {
  const text = line.trim();
  if (text === "") return [];
  state.last_raw = text;
  return [{ kind: "raw", text: clip(text) }];
}

/**
 * Text given in argv when a long prompt goes through stdin to a CLI that appends its argv
 * prompt to stdin input (gemini, qwen, opencode): the model sees stdin, a blank line, this.
 */
export const STDIN_PROMPT_TAIL = "Follow the instructions given above.";

/**
 * The argv prompt and stdin for CLIs that take the prompt in argv and append it to stdin.
 * A prompt too long for argv, or one starting with `-` (the CLI's option parser would read
 * it as a flag), goes through stdin.
 */
export function argvOrStdin(
  prompt: string,
): { arg: string; stdin?: Uint8Array; channel: "argv" | "stdin" } {
  if (!tooLongForArgv(prompt) && !prompt.startsWith("-")) return { arg: prompt, channel: "argv" };
  return { arg: STDIN_PROMPT_TAIL, stdin: utf8(prompt), channel: "stdin" };
}

/** Canonical-enough JSON text for generated config files (stable key order as written). */
export function jsonFile(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}
