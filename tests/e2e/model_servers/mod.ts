/**
 * Deterministic local model servers for end-to-end tests with real agent CLIs: one server on
 * 127.0.0.1 speaks the Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and
 * Gemini APIs (streaming SSE), follows a script per turn (a tool call picked from the tools
 * the CLI offered, aimed inside the CLI's working directory, then a final text; or a scripted
 * HTTP error, hang or malformed stream), and logs every request. The egress sentinel is the
 * proxy the CLIs get, so any attempt to reach another host is recorded.
 *
 * @example
 * ```ts ignore
 * import { startModelServer } from "./mod.ts";
 * const server = startModelServer({ script: ["@model write hello.txt hi", "@model say done"] });
 * // point a CLI at server.origin, run it, then:
 * console.log(server.turns().map((r) => r.answer), server.problems);
 * await server.close();
 * ```
 *
 * @module
 */
export { type ApiName, type MediaPart, type Usage } from "./_wire.ts";
export { type EgressSentinel, type ForeignAttempt, startEgressSentinel } from "./egress.ts";
export {
  DEFAULT_FINAL_TEXT,
  FailureCounters,
  type ModelAction,
  type ModelFailure,
  type ModelScript,
  ModelScriptError,
  type ModelTurn,
  parseScript,
  scriptLines,
} from "./script.ts";
export {
  CALL_USAGE,
  type LoggedRequest,
  type ModelServer,
  type ModelServerOptions,
  SIDE_USAGE,
  startModelServer,
  TEXT_USAGE,
} from "./server.ts";
export {
  findCwd,
  namedCall,
  type OfferedTool,
  shellQuote,
  type ToolCall,
  writeCall,
} from "./tools.ts";
