/**
 * The one HTTP seam of the provider layer: a request with a deadline, answered with status,
 * content type, body and duration, or an error naming what happened (refused, timed out). The
 * real one is `fetch`; tests may pass their own.
 */

/** An HTTP answer. */
export interface HttpAnswer {
  /** Status code. */
  status: number;
  /** `content-type` header (empty when absent). */
  contentType: string;
  /** Body text (the first {@linkcode MAX_BODY_CHARS} characters). */
  body: string;
  /** Duration in ms (integer). */
  ms: number;
}

/** Thrown when no answer came: `unreachable` or `timeout`. */
export class HttpFailure extends Error {
  /** What happened. */
  readonly kind: "unreachable" | "timeout";
  /** Duration until the failure, ms. */
  readonly ms: number;
  constructor(kind: "unreachable" | "timeout", message: string, ms: number) {
    super(message);
    this.name = "HttpFailure";
    this.kind = kind;
    this.ms = ms;
  }
}

/** One request: method, URL, headers, optional JSON body, deadline in ms. */
export interface HttpRequest {
  /** Method. */
  method: "GET" | "POST" | "HEAD";
  /** URL. */
  url: string;
  /** Headers. */
  headers: Record<string, string>;
  /** Body (sent as JSON). */
  body?: unknown;
  /** Deadline of the whole exchange (headers and body), ms. */
  timeoutMs: number;
}

/** Sends a request. */
export type HttpSend = (request: HttpRequest) => Promise<HttpAnswer>;

/** Largest body kept (a model answer to a probe is short; an error page may not be). */
export const MAX_BODY_CHARS = 1024 * 1024;

/** Sends with `fetch`; the deadline covers the body too (a server that hangs mid-stream). */
export const fetchHttp: HttpSend = async (request: HttpRequest): Promise<HttpAnswer> => {
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: controller.signal,
      redirect: "manual",
    });
    const body = request.method === "HEAD" ? "" : await res.text();
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      body: body.slice(0, MAX_BODY_CHARS),
      ms: elapsed(),
    };
  } catch (error) {
    if (controller.signal.aborted) {
      throw new HttpFailure(
        "timeout",
        `no complete answer within ${request.timeoutMs / 1000}s`,
        elapsed(),
      );
    }
    throw new HttpFailure("unreachable", `unreachable: ${(error as Error).message}`, elapsed());
  } finally {
    clearTimeout(timer);
  }
};
