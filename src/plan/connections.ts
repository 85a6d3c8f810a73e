// A step's `connections:` (docs/FLEET.md "Connections in a run"): the connection documents
// whose secrets its agents get, each under an environment variable. The step format owns the
// grammar (names as the fleet plane spells them, variable names, which names are reserved);
// the fleet plane checks the names exist at run start and mints the secrets at each claim.

/** One connection a step asks for. */
export interface ConnectionRequest {
  /** The connection document's name. */
  name: string;
  /** The variable the agent reads its secret from. */
  env: string;
}

/** Most connections one step may ask for. */
export const MAX_CONNECTIONS_PER_STEP = 8;

/** Connection names, as the fleet plane spells them (src/fleet/names.ts, same grammar). */
const NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;

const ENV = /^[A-Z_][A-Z0-9_]{0,127}$/;

/** Variables a connection may never set: the agent's own plumbing and the loader's. */
const RESERVED = [
  /^(PATH|HOME|SHELL|USER|LOGNAME|PWD|OLDPWD|IFS|TMPDIR|TERM|LANG|LC_ALL|TZ)$/,
  /^(LANGUAGE|LC_[A-Z]+|XDG_[A-Z_]+)$/,
  /^(LD|DYLD)_/,
  /^(GIT|SSH|GPG|GNUPG)_/,
  /^(DENO|NODE|PYTHON|PERL|RUBY|BASH)_/,
  /^(HTTP|HTTPS|FTP|ALL|NO)_PROXY$/,
  /^BERNSTEIN_(?!CONN_)/,
];

/** The variable a connection's secret is given in when the step names none. */
export function defaultConnectionEnv(name: string): string {
  return `BERNSTEIN_CONN_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/** Why `env` cannot carry a connection's secret, or undefined when it can. */
export function connectionEnvProblem(env: string): string | undefined {
  if (!ENV.test(env)) return `'${env}' is not a variable name ([A-Z_][A-Z0-9_]*)`;
  if (RESERVED.some((r) => r.test(env))) {
    return `'${env}' is reserved (the agent's own environment, loader, proxy or bernstein's)`;
  }
  return undefined;
}

/** Why `name` is not a connection name, or undefined. */
export function connectionNameProblem(name: string): string | undefined {
  return NAME.test(name)
    ? undefined
    : `'${name}' is not a connection name ([a-z0-9][a-z0-9._-]*, at most 128)`;
}

/**
 * Reads one entry (`NAME` or `{name: NAME, env: VAR}`); a problem as text. Shared by the plan
 * loader (which locates it) and the fleet plane (which re-checks what a task carries).
 */
export function readConnectionRequest(item: unknown): ConnectionRequest | string {
  if (typeof item === "string") {
    return connectionNameProblem(item) ?? { name: item, env: defaultConnectionEnv(item) };
  }
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    return "expected a connection name or {name: NAME, env: VARIABLE}";
  }
  const o = item as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => k !== "name" && k !== "env");
  if (extra.length > 0) return `unknown key '${extra[0]}' (accepted: name, env)`;
  if (typeof o.name !== "string") return "name: expected a connection name";
  const bad = connectionNameProblem(o.name);
  if (bad !== undefined) return `name: ${bad}`;
  if (o.env === undefined) return { name: o.name, env: defaultConnectionEnv(o.name) };
  if (typeof o.env !== "string") return "env: expected a variable name";
  const envBad = connectionEnvProblem(o.env);
  return envBad === undefined ? { name: o.name, env: o.env } : `env: ${envBad}`;
}

/** Reads a whole list; problems with their index. Two entries may not share a variable. */
export function readConnectionRequests(
  value: unknown,
): { requests: ConnectionRequest[]; problems: { index?: number; message: string }[] } {
  const requests: ConnectionRequest[] = [];
  const problems: { index?: number; message: string }[] = [];
  if (value === undefined || value === null) return { requests, problems };
  if (!Array.isArray(value)) {
    problems.push({ message: "must be a list of connection names or {name, env}" });
    return { requests, problems };
  }
  if (value.length > MAX_CONNECTIONS_PER_STEP) {
    problems.push({
      message: `${value.length} connections; at most ${MAX_CONNECTIONS_PER_STEP} per step`,
    });
  }
  value.forEach((item, index) => {
    const r = readConnectionRequest(item);
    if (typeof r === "string") problems.push({ index, message: r });
    else if (requests.some((o) => o.env === r.env)) {
      problems.push({ index, message: `two connections in ${r.env}` });
    } else requests.push(r);
  });
  return { requests, problems };
}
