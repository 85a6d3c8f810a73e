// The task server's errors: HTTP refusals raised inside it, token-file and start-up failures,
// and what a client sees when the server refuses or cannot be reached.

import {
  BernsteinError,
  type BernsteinErrorOptions,
  type ErrorCode,
  isErrorCode,
  KeyMissingError,
} from "../errors/mod.ts";

/**
 * An HTTP-level refusal raised inside the server (auth, routing, body). `status` is the HTTP
 * status it is answered with.
 */
export class HttpError extends BernsteinError {
  /** HTTP status code. */
  readonly status: number;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options: BernsteinErrorOptions = {},
  ) {
    super(code, message, options);
    this.status = status;
  }
}

/** A token file or the token directory is unusable (bad mode, damaged scope file). */
export class TokenFileError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("server.token_file", message, options);
  }
}

/** The task server could not start (port taken, bad allow list). */
export class ServerStartError extends BernsteinError {
  constructor(code: ErrorCode, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}

/** The server answered with an error: `code` and `message` are the server's own. */
export class ServerRefusalError extends BernsteinError {
  /** HTTP status of the answer. */
  readonly status: number;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options: BernsteinErrorOptions = {},
  ) {
    super(code, message, options);
    this.status = status;
  }
}

/**
 * The refusal an error answer (`{"error": {"code", "message"}}`) stands for. The answer comes
 * from the network: a code this version does not know (a newer server's) is not taken as one of
 * ours: it is `server.bad_response` with the server's code in the message.
 */
export function refusalOfAnswer(status: number, answer: unknown): ServerRefusalError {
  const error = typeof answer === "object" && answer !== null && "error" in answer
    ? answer.error
    : undefined;
  const field = (name: string): unknown =>
    typeof error === "object" && error !== null && name in error
      ? (error as Record<string, unknown>)[name]
      : undefined;
  const code = field("code");
  const message = field("message");
  const text = typeof message === "string" ? message : `HTTP ${status}`;
  if (typeof code === "string" && isErrorCode(code)) {
    return new ServerRefusalError(status, code, text);
  }
  const unknown = typeof code === "string" ? ` (server code '${code}', unknown here)` : "";
  return new ServerRefusalError(status, "server.bad_response", text + unknown);
}

/** No server answered: connection refused on every attempt, or no address known. */
export class ServerUnreachableError extends BernsteinError {
  constructor(code: ErrorCode, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}

/** No token was found for a client (exit code 3, like any missing key). */
export class TokenMissingError extends KeyMissingError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("server.token_missing", message, options);
  }
}
