// Where an engine is: a storage URL parsed into host, port, credentials and options, with the
// config key and layer that set it. Only `shown` (password replaced) and `address`
// (`host:port`) ever reach output, errors or the audit log.
import { StorageUrlError } from "./errors.ts";

/** The engines behind `storage.backend: postgres | redis`. */
export type Engine = "postgres" | "redis";

/** The config keys that hold engine URLs. */
export type UrlKey = "storage.database_url" | "storage.redis_url";

/** Where a URL came from, for messages: the key and the layer that set it. */
export interface UrlSource {
  /** Config key. */
  key: UrlKey;
  /** Layer label (`bernstein.yaml`, `overlay`, `env:BERNSTEIN_DATABASE_URL`, …). */
  layer: string;
}

/** TLS use: off, opportunistic (PostgreSQL `prefer`), required, or required with verification. */
export type TlsMode = "disable" | "prefer" | "require" | "verify-full";

/** A parsed engine URL. */
export interface Endpoint {
  /** Which engine. */
  engine: Engine;
  /** Key and layer that set it. */
  source: UrlSource;
  /** Host name or address (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
  /** User name, if any. */
  user: string | undefined;
  /** Password, if any (never printed). */
  password: string | undefined;
  /** PostgreSQL database name, or the Redis database index as text. */
  database: string;
  /** TLS use. */
  tls: TlsMode;
  /** `host:port` (`[::1]:5432` for IPv6). */
  address: string;
  /** The URL with the password replaced by `***`. */
  shown: string;
}

const DEFAULT_PORT: Record<Engine, number> = { postgres: 5432, redis: 6379 };
const SCHEMES: Record<Engine, readonly string[]> = {
  postgres: ["postgres:", "postgresql:"],
  redis: ["redis:", "rediss:"],
};
const EXAMPLE: Record<Engine, string> = {
  postgres: "postgres://user:password@host:5432/database",
  redis: "redis://[:password@]host:6379[/db]",
};
const SSL_MODES: Record<string, TlsMode> = {
  disable: "disable",
  allow: "prefer",
  prefer: "prefer",
  require: "require",
  "verify-ca": "verify-full",
  "verify-full": "verify-full",
};

function where(source: UrlSource): string {
  return `${source.key} (set by ${source.layer})`;
}

function invalid(source: UrlSource, engine: Engine, problem: string): StorageUrlError {
  return new StorageUrlError("storage.url_invalid", `${where(source)}: ${problem}`, {
    hint: `expected ${EXAMPLE[engine]}`,
  });
}

function decode(part: string, source: UrlSource, engine: Engine, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(source, engine, `the ${what} is not valid percent-encoding`);
  }
}

/** `host:port`, with brackets around an IPv6 address. */
export function formatAddress(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Parses a storage URL for `engine`. Refuses (exit 2, naming the key and layer, never the
 * URL) anything that is not `postgres(ql)://` / `redis(s)://` with a host: sockets, unknown
 * `sslmode`, a port out of range, a Redis database that is not a number.
 *
 * @example
 * ```ts
 * const pg = parseEndpoint("postgres", "postgres://app:s3cret@db:5432/work", {
 *   key: "storage.database_url",
 *   layer: "bernstein.yaml",
 * });
 * pg.address; // "db:5432"
 * pg.shown; // "postgres://app:***@db:5432/work"
 * ```
 */
export function parseEndpoint(engine: Engine, text: string, source: UrlSource): Endpoint {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw invalid(source, engine, "not a URL");
  }
  if (!SCHEMES[engine].includes(url.protocol)) {
    throw invalid(
      source,
      engine,
      `scheme '${url.protocol.slice(0, 20)}' is not ${SCHEMES[engine].join(" or ")}`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") {
    throw invalid(source, engine, "no host (Unix sockets are not supported; use host:port)");
  }
  const port = url.port === "" ? DEFAULT_PORT[engine] : Number(url.port);
  if (!(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw invalid(source, engine, `port ${url.port} is out of range`);
  }
  const user = url.username === "" ? undefined : decode(url.username, source, engine, "user");
  const password = url.password === ""
    ? undefined
    : decode(url.password, source, engine, "password");
  const path = decode(url.pathname.replace(/^\//, ""), source, engine, "database");
  let database: string;
  let tls: TlsMode;
  if (engine === "postgres") {
    database = path === "" ? (user ?? "postgres") : path;
    const mode = url.searchParams.get("sslmode") ?? "prefer";
    const known = SSL_MODES[mode];
    if (known === undefined) {
      throw invalid(
        source,
        engine,
        `sslmode '${mode.slice(0, 20)}' is not one of ${Object.keys(SSL_MODES).join(", ")}`,
      );
    }
    tls = known;
  } else {
    database = path === "" ? "0" : path;
    if (!/^[0-9]{1,5}$/.test(database)) {
      throw invalid(source, engine, "the database after the host must be a number (/0)");
    }
    tls = url.protocol === "rediss:" ? "verify-full" : "disable";
  }
  for (const key of url.searchParams.keys()) {
    if (engine === "postgres" && key === "sslmode") continue;
    throw invalid(source, engine, `unknown option '${key.slice(0, 40)}' (only sslmode is read)`);
  }
  const shownUrl = new URL(url.href);
  if (shownUrl.password !== "") shownUrl.password = "***";
  return {
    engine,
    source,
    host,
    port,
    user,
    password,
    database,
    tls,
    address: formatAddress(host, port),
    shown: shownUrl.href,
  };
}

/** Where an endpoint came from and where it points, for one-line messages. */
export function describeEndpoint(endpoint: Endpoint): string {
  return `${where(endpoint.source)} → ${endpoint.address}`;
}

/**
 * Removes every secret of `endpoint` from a driver's message (the password, and the whole URL
 * in case a driver echoes it), so error text is safe to print and to audit.
 */
export function scrubSecrets(text: string, endpoint: Endpoint): string {
  let out = text;
  const secrets = [endpoint.password, endpoint.password && encodeURIComponent(endpoint.password)]
    .filter((s): s is string => s !== undefined && s.length > 0);
  for (const secret of secrets) out = out.split(secret).join("***");
  return out;
}
