// Turning invocation options into flags: tiers → models, notes for options a CLI cannot honour,
// the executable and extra arguments from settings.
import { type InvocationInput, type Tier, TIERS } from "./types.ts";

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
