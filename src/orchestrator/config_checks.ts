/**
 * Checks of the effective configuration that need more than its schema — the adapter
 * registry, the endpoint table, address syntax — made before anything starts: by
 * `config validate`, `doctor` and `run` (a usage error, exit 2, even with --dry-run), never
 * at a spawn after three retries. Each problem points at the key's FILE:LINE:COL.
 */
import { ADAPTER_NAMES } from "../adapters/mod.ts";
import type { Config, ConfigProblem } from "../config/mod.ts";
import { closestMatch, type ErrorCode } from "../errors/mod.ts";
import { compileAllowList } from "../server/mod.ts";

/** What the checks read: the configuration and where each key came from. */
export interface CheckedConfig {
  /** Effective configuration. */
  config: Config;
  /** `file:line:col` of a dotted key (with `value`, of its value) in the layer that set it. */
  locate(dotted: string, value?: boolean): string | undefined;
}

function problem(
  code: ErrorCode,
  key: string,
  message: string,
  at: CheckedConfig,
  hint?: string,
): ConfigProblem {
  return {
    severity: "error",
    code,
    message: `${key}: ${message}`,
    location: at.locate(key, true) ?? "effective configuration",
    ...(hint ? { hint } : {}),
  };
}

/** Every key that names an adapter, with the name. */
function adapterKeys(config: Config): [string, string][] {
  const keys: [string, string][] = [];
  if (config.cli !== "auto") keys.push(["cli", config.cli]);
  if (config.internal_llm_provider) {
    keys.push(["internal_llm_provider", config.internal_llm_provider]);
  }
  for (const [role, policy] of Object.entries(config.role_model_policy ?? {})) {
    if (policy.cli) keys.push([`role_model_policy.${role}.cli`, policy.cli]);
    (policy.ladder ?? []).forEach((step, i) => {
      if (step.cli) keys.push([`role_model_policy.${role}.ladder.${i}.cli`, step.cli]);
    });
  }
  for (const [role, spec] of Object.entries(config.provider_availability?.roles ?? {})) {
    spec.chain.forEach((element, i) => {
      keys.push([`provider_availability.roles.${role}.chain.${i}.adapter`, element.adapter]);
    });
  }
  return keys;
}

function adapterProblems(at: CheckedConfig): ConfigProblem[] {
  return adapterKeys(at.config).filter(([, name]) => !ADAPTER_NAMES.includes(name)).map((
    [key, name],
  ) => {
    const near = closestMatch(name, ADAPTER_NAMES);
    return problem(
      "config.unknown_adapter",
      key,
      `unknown adapter '${name}'; known: ${ADAPTER_NAMES.join(", ")}`,
      at,
      near ? `did you mean '${near}'?` : undefined,
    );
  });
}

/** Every key that names an endpoint profile, with the name. */
function endpointKeys(config: Config): [string, string][] {
  const keys: [string, string][] = [];
  for (const [role, policy] of Object.entries(config.role_model_policy ?? {})) {
    if (policy.endpoint !== undefined) {
      keys.push([`role_model_policy.${role}.endpoint`, policy.endpoint]);
    }
  }
  for (const [role, spec] of Object.entries(config.provider_availability?.roles ?? {})) {
    spec.chain.forEach((element, i) => {
      if (element.endpoint !== undefined) {
        keys.push([`provider_availability.roles.${role}.chain.${i}.endpoint`, element.endpoint]);
      }
    });
  }
  return keys;
}

function endpointProblems(at: CheckedConfig): ConfigProblem[] {
  const defined = Object.keys(at.config.local_endpoints ?? {});
  const out: ConfigProblem[] = [];
  for (const [key, name] of endpointKeys(at.config)) {
    if (defined.includes(name)) continue;
    const near = closestMatch(name, defined);
    out.push(problem(
      "config.unknown_endpoint",
      key,
      `'${name}' is not defined under local_endpoints` +
        (defined.length > 0 ? `; defined: ${defined.join(", ")}` : ""),
      at,
      near ? `did you mean '${near}'?` : "add it under local_endpoints",
    ));
  }
  return out;
}

function allowedIpProblems(at: CheckedConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  at.config.network.allowed_ips.forEach((entry, i) => {
    try {
      compileAllowList([entry]);
    } catch {
      out.push(problem(
        "config.bad_allowed_ip",
        `network.allowed_ips.${i}`,
        `'${entry}' is not an IP address or CIDR range`,
        at,
        "e.g. 127.0.0.1, ::1, 10.0.0.0/8",
      ));
    }
  });
  return out;
}

/**
 * Every problem of the configuration that its schema cannot see: unknown adapter names,
 * endpoints no `local_endpoints` entry defines, malformed `network.allowed_ips` entries.
 * Pure apart from reading the adapter table.
 */
export function checkConfig(at: CheckedConfig): ConfigProblem[] {
  return [...adapterProblems(at), ...endpointProblems(at), ...allowedIpProblems(at)];
}
