// One answer of `bernstein policy hook`: read the CLI's hook input, get a decision (from the
// run's task server, or from the project's rules outside a run), check it against the
// contract, and render it in the CLI's format. Every failure on the way — bad input, no
// answer, an answer that breaks the contract — is a deny, so the caller can always print
// the result and exit 0.
import { checkDecision, failClosed, type PolicyDecision } from "./contract.ts";
import { type HookFormat, type HookRequest, parseHookInput, renderHookAnswer } from "./hook.ts";

/** Options of {@linkcode answerHook}. */
export interface HookRunOptions {
  /** The CLI's answer format. */
  format: HookFormat;
  /** Largest input accepted. */
  maxInputBytes: number;
  /** Where the decision comes from; returns it as untyped JSON (checked here). */
  decide(request: HookRequest): Promise<unknown>;
  /** Where the answer came from, for refusal messages (`the task server's answer`). */
  source: string;
}

/** What the hook prints, and the decision behind it. */
export interface HookOutcome {
  /** The decision after every check. */
  decision: PolicyDecision;
  /** The JSON to print on stdout. */
  answer: Record<string, unknown>;
}

/**
 * Answers one hook call.
 *
 * @example
 * ```ts ignore
 * const out = await answerHook(stdinBytes, {
 *   format: "claude",
 *   maxInputBytes: 1 << 20,
 *   source: "the task server's answer",
 *   decide: (request) => postToServer(request),
 * });
 * console.log(JSON.stringify(out.answer));
 * ```
 */
export async function answerHook(stdin: Uint8Array, options: HookRunOptions): Promise<HookOutcome> {
  const parsed = parseHookInput(stdin, options.maxInputBytes);
  let decision: PolicyDecision;
  if (!parsed.ok) {
    decision = parsed.decision;
  } else {
    let raw: unknown;
    try {
      raw = await options.decide(parsed.request);
      decision = checkDecision(raw, options.source).decision;
    } catch (error) {
      decision = failClosed("hookFailure", (error as Error).message);
    }
  }
  return { decision, answer: renderHookAnswer(decision, options.format) };
}
