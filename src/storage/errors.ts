// Errors of the shared stores. Every message starts with the config key and the layer that set
// it and names `host:port` — never the URL itself, which may carry a password.
import { BernsteinError, type BernsteinErrorOptions, ExitCode } from "../errors/mod.ts";

/** A storage URL is missing, malformed or of the wrong scheme (refused before anything starts). */
export class StorageUrlError extends BernsteinError {
  constructor(code: "storage.url_invalid" | "storage.url_missing", message: string, options: {
    hint?: string;
  }) {
    super(code, message, { ...options, exitCode: ExitCode.usage });
  }
}

/** The configured host is outside this binary's network grant (loopback only by default). */
export class StorageNetDeniedError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions) {
    super("storage.net_denied", message, { ...options, exitCode: ExitCode.usage });
  }
}

/** A configured engine did not answer (refused, timed out, no route, name not resolved). */
export class StorageUnreachableError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions) {
    super("storage.unreachable", message, { exitCode: ExitCode.usage, ...options });
  }
}

/** The engine answered but refused the credentials or the database. */
export class StorageAuthError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions) {
    super("storage.auth_failed", message, { exitCode: ExitCode.usage, ...options });
  }
}

/**
 * The database schema does not match this bernstein: made by a newer version (refused, both
 * versions named) or older (run `bernstein storage migrate`).
 */
export class SchemaVersionError extends BernsteinError {
  /** Version found in the database. */
  readonly found: number;
  /** Version this bernstein uses. */
  readonly expected: number;

  constructor(
    code: "storage.schema_too_new" | "storage.schema_outdated",
    found: number,
    expected: number,
    options: BernsteinErrorOptions = {},
  ) {
    super(
      code,
      code === "storage.schema_too_new"
        ? `the database schema is version ${found}, newer than this bernstein supports (version ${expected})`
        : `the database schema is version ${found}; this bernstein needs version ${expected}`,
      {
        hint: code === "storage.schema_too_new"
          ? "upgrade bernstein on this host (every host sharing the database must run a version that knows the schema)"
          : "run 'bernstein storage migrate'",
        ...options,
      },
    );
    this.found = found;
    this.expected = expected;
  }
}
