/**
 * The agent CLIs' pre-tool hook, on its own: read a hook input, get a decision, check it against
 * the contract, render the answer. `bernstein policy hook --server` (run once per tool call an
 * agent makes) loads only this and the decision contract, not the rule engine, its loader and
 * the configuration behind them (~60 ms of CPU less a call).
 *
 * @module
 */
export { failClosed, type PolicyDecision } from "../contract.ts";
export {
  DEFAULT_MAX_HOOK_INPUT_BYTES,
  HOOK_FORMATS,
  type HookFormat,
  type HookRequest,
  renderHookAnswer,
} from "../hook.ts";
export { answerHook, type HookOutcome } from "../hook_run.ts";
