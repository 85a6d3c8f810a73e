/**
 * Health probes of an endpoint (cheap and honest, docs/PROVIDERS.md): one GET of the model
 * list (OpenAI APIs) or of the model's record (Anthropic, Gemini) with the profile's own key,
 * under a deadline. No model call, no agent. The answer maps onto one {@linkcode ProbeStatus}.
 */
import { HttpFailure, type HttpSend } from "./http.ts";
import type { ProbeResult, ProbeStatus } from "./probe_result.ts";
import { authHeaders, modelInfoUrl, type WireApi } from "./_wire.ts";

/** What a probe of an endpoint needs. */
export interface EndpointProbeTarget {
  /** Wire API. */
  api: WireApi;
  /** Base URL. */
  base_url: string;
  /** Model (Anthropic and Gemini probe the model's record). */
  model: string;
  /** Key. */
  key: string;
  /** Deadline, ms. */
  timeoutMs: number;
}

function statusOf(code: number): ProbeStatus {
  if (code >= 200 && code < 300) return "healthy";
  if (code === 429) return "rate_limited";
  if (code === 401 || code === 403) return "auth";
  if (code >= 500) return "server_error";
  return "bad_answer";
}

/** Probes an endpoint. */
export async function probeEndpoint(
  http: HttpSend,
  target: EndpointProbeTarget,
): Promise<ProbeResult> {
  const url = modelInfoUrl(target.api, target.base_url, target.model);
  try {
    const res = await http({
      method: "GET",
      url,
      headers: authHeaders(target.api, target.key),
      timeoutMs: target.timeoutMs,
    });
    const status = statusOf(res.status);
    return {
      status,
      healthy: status === "healthy",
      detail: `GET ${url} → ${res.status}`,
      kind: "http",
      ms: res.ms,
    };
  } catch (error) {
    if (!(error instanceof HttpFailure)) throw error;
    return {
      status: error.kind,
      healthy: false,
      detail: `GET ${url}: ${error.message}`,
      kind: "http",
      ms: error.ms,
    };
  }
}
