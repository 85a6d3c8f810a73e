/**
 * Endpoint certification, the I/O side: `bernstein doctor --endpoint` resolves the profile (by
 * name or URL), runs the conformance subset against the server with the profile's key and
 * timeout, and writes the receipt signed with the install identity (`.sdd/keys/install.key`,
 * src/fleet) to `.sdd/endpoints/<name>.receipt.json`; and the check made by `config validate`,
 * `doctor` and every run start: each endpoint profile that a merge-critical role uses needs a
 * receipt that verifies (signer, signature, endpoint, model, engine, age, grade).
 */
import { join } from "node:path";
import type { Config, ConfigProblem } from "../config/mod.ts";
import { BernsteinError, KeyMissingError, UsageError } from "../errors/mod.ts";
import { ensureInstallIdentity, readInstallIdentity } from "../fleet/mod.ts";
import {
  type Clock,
  type EnvReader,
  type Random,
  readFileIfExists,
  sddFolder,
  writeFileAtomic,
} from "../io/mod.ts";
import { VERSION } from "../meta/mod.ts";
import {
  certifyCommand,
  type EndpointReceipt,
  fetchHttp,
  GATED_MIN_GRADE,
  type HttpSend,
  isMergeCritical,
  parseReceipt,
  receiptPath,
  type ReceiptProblem,
  runConformance,
  signReceipt,
  verifyReceipt,
  type WireApi,
} from "../providers/mod.ts";

/** Key sent to endpoints whose profile names no `api_key_env` (the adapters send the same). */
const PLACEHOLDER_KEY = "bernstein-local";

/** What `doctor --endpoint` was asked. */
export interface CertifyRequest {
  /** A `local_endpoints` profile name, or a base URL. */
  endpoint: string;
  /** Model (default: the profile's). */
  model?: string;
  /** Wire API (default: the profile's, else openai-chat). */
  api?: WireApi;
  /** Engine label (default: the profile's). */
  engine?: string;
  /** Receipt name for a URL no profile uses. */
  name?: string;
}

/** The profile a certification is for. */
export interface CertifiedProfile {
  /** Receipt name (the profile name). */
  name: string;
  /** Base URL. */
  base_url: string;
  /** Model. */
  model: string;
  /** API. */
  api: WireApi;
  /** Engine label. */
  engine: string | null;
  /** Key variable. */
  api_key_env?: string;
  /** Per-request timeout, s. */
  timeout_s: number;
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}

/** Resolves what to certify from the request and the configuration. */
export function resolveCertifiedProfile(req: CertifyRequest, config: Config): CertifiedProfile {
  const profiles = config.local_endpoints ?? {};
  let name = req.name;
  let profile = profiles[req.endpoint];
  if (profile !== undefined) {
    name ??= req.endpoint;
  } else {
    try {
      new URL(req.endpoint);
    } catch {
      const known = Object.keys(profiles);
      throw new UsageError(
        "doctor.unknown_endpoint",
        `--endpoint ${req.endpoint}: neither a local_endpoints profile nor a URL`,
        { hint: known.length > 0 ? `profiles: ${known.join(", ")}` : "give http://host:port/…" },
      );
    }
    const matches = Object.entries(profiles).filter(([, p]) =>
      sameUrl(p.base_url, req.endpoint) && (req.model === undefined || p.model === req.model)
    );
    if (matches.length === 1 && name === undefined) [name, profile] = matches[0];
    if (name === undefined) {
      throw new UsageError(
        "doctor.endpoint_name",
        `no single local_endpoints profile uses ${req.endpoint}` +
          (req.model ? ` with model ${req.model}` : "") + "; name the receipt with --name",
      );
    }
  }
  const model = req.model ?? profile?.model;
  if (model === undefined) {
    throw new UsageError(
      "doctor.endpoint_model",
      `--endpoint ${req.endpoint}: which model? pass --model`,
    );
  }
  return {
    name,
    base_url: profile?.base_url ?? req.endpoint,
    model,
    api: req.api ?? profile?.api ?? "openai-chat",
    engine: req.engine ?? profile?.engine ?? null,
    ...(profile?.api_key_env ? { api_key_env: profile.api_key_env } : {}),
    timeout_s: profile?.timeout ?? config.tuning.providers.request_timeout_s,
  };
}

/** The key of a profile: its variable's value (refused when unset) or the placeholder. */
export function profileKey(p: { name: string; api_key_env?: string }, env: EnvReader): string {
  if (p.api_key_env === undefined) return PLACEHOLDER_KEY;
  const value = env.get(p.api_key_env);
  if (value === undefined || value === "") {
    throw new BernsteinError(
      "doctor.endpoint_key_missing",
      `endpoint '${p.name}' needs $${p.api_key_env}, which is not set`,
      { location: `local_endpoints.${p.name}.api_key_env`, exitCode: 3 },
    );
  }
  return value;
}

/** What certification needs from outside. */
export interface CertifyDeps {
  /** `.sdd/` of the project. */
  sdd: string;
  /** Effective configuration. */
  config: Config;
  /** Environment (the key variable). */
  env: EnvReader;
  /** Clock (the receipt's date). */
  clock: Clock;
  /** Randomness (a first install identity). */
  random: Random;
  /** HTTP (default fetch). */
  http?: HttpSend;
}

/** A written receipt. */
export interface CertifyOutcome {
  /** The profile certified. */
  profile: CertifiedProfile;
  /** The signed receipt. */
  receipt: EndpointReceipt;
  /** Where it was written. */
  path: string;
}

/** Runs the conformance subset and writes the signed receipt (whatever the grade). */
export async function certifyEndpoint(
  req: CertifyRequest,
  deps: CertifyDeps,
): Promise<CertifyOutcome> {
  const profile = resolveCertifiedProfile(req, deps.config);
  const key = profileKey(profile, deps.env);
  const tuning = deps.config.tuning.providers;
  const report = await runConformance(deps.http ?? fetchHttp, {
    base_url: profile.base_url,
    api: profile.api,
    model: profile.model,
    key,
    timeoutMs: profile.timeout_s * 1000,
  }, {
    latencyRequests: tuning.latency_requests,
    contextMaxTokens: tuning.context_probe_max_tokens,
  });
  const identity = await ensureInstallIdentity(deps.sdd, deps.random);
  const receipt = signReceipt({
    schema: "bernstein.endpoint-receipt/1",
    name: profile.name,
    endpoint: profile.base_url,
    api: profile.api,
    engine: profile.engine,
    model: profile.model,
    grade: report.grade,
    checks: report.checks,
    latency_ms: report.latency_ms,
    context_tokens: report.context_tokens,
    certified_at: new Date(deps.clock.nowMs()).toISOString(),
    bernstein: VERSION,
  }, identity);
  const path = join(deps.sdd, receiptPath(profile.name));
  await Deno.mkdir(sddFolder(deps.sdd, "endpoints"), { recursive: true });
  await writeFileAtomic(path, new TextEncoder().encode(JSON.stringify(receipt, null, 2) + "\n"), {
    mode: 0o644,
  });
  return { profile, receipt, path };
}

/** A profile used by a merge-critical role, and the key that uses it. */
interface GatedUse {
  /** Profile name. */
  profile: string;
  /** Dotted key (for the location). */
  key: string;
  /** The role. */
  role: string;
}

/** Every use of an endpoint profile by a merge-critical role (role policy and chains). */
export function gatedEndpointUses(config: Config): GatedUse[] {
  const uses: GatedUse[] = [];
  for (const [role, policy] of Object.entries(config.role_model_policy ?? {})) {
    if (policy.endpoint !== undefined && isMergeCritical(role)) {
      uses.push({ profile: policy.endpoint, key: `role_model_policy.${role}.endpoint`, role });
    }
  }
  for (const [role, spec] of Object.entries(config.provider_availability?.roles ?? {})) {
    spec.chain.forEach((element, i) => {
      if (element.endpoint !== undefined && isMergeCritical(role)) {
        uses.push({
          profile: element.endpoint,
          key: `provider_availability.roles.${role}.chain.${i}.endpoint`,
          role,
        });
      }
    });
  }
  return uses;
}

/** Reads and checks the receipt of a profile: undefined when it certifies, else why not. */
export async function receiptProblem(
  sdd: string,
  name: string,
  profile: { base_url: string; model?: string; engine?: string },
  publicKey: Uint8Array | undefined,
  nowMs: number,
  maxAgeDays: number,
): Promise<ReceiptProblem | undefined> {
  const bytes = await readFileIfExists(join(sdd, receiptPath(name)));
  if (bytes === undefined) {
    return {
      code: "receipt.missing",
      message: `no certification receipt (.sdd/${receiptPath(name)})`,
    };
  }
  const parsed = parseReceipt(new TextDecoder().decode(bytes));
  if ("code" in parsed) return parsed;
  if (publicKey === undefined) {
    return {
      code: "receipt.foreign_signer",
      message: "this install has no identity key (.sdd/keys/install.key) to check it with",
    };
  }
  return verifyReceipt(parsed, {
    base_url: profile.base_url,
    model: profile.model,
    engine: profile.engine,
    publicKey,
    nowMs,
    maxAgeDays,
    minGrade: GATED_MIN_GRADE,
  });
}

/** The install identity's public key, or undefined when the install has none yet. */
async function installPublicKey(sdd: string): Promise<Uint8Array | undefined> {
  try {
    return (await readInstallIdentity(sdd)).publicKey;
  } catch (error) {
    if (error instanceof KeyMissingError) return undefined;
    throw error;
  }
}

/**
 * One error per endpoint profile that a merge-critical role uses without a receipt that
 * verifies, naming the role's key and the exact command that certifies the profile.
 */
export async function certificationProblems(
  config: Config,
  locate: (dotted: string, value?: boolean) => string | undefined,
  sdd: string,
  nowMs: number,
): Promise<ConfigProblem[]> {
  const uses = gatedEndpointUses(config);
  if (uses.length === 0) return [];
  const publicKey = await installPublicKey(sdd);
  const problems: ConfigProblem[] = [];
  const checked = new Map<string, ReceiptProblem | undefined>();
  for (const use of uses) {
    const profile = config.local_endpoints?.[use.profile];
    if (profile === undefined) continue; // config.unknown_endpoint says so
    if (!checked.has(use.profile)) {
      checked.set(
        use.profile,
        await receiptProblem(
          sdd,
          use.profile,
          profile,
          publicKey,
          nowMs,
          config.tuning.providers.receipt_max_age_days,
        ),
      );
    }
    const problem = checked.get(use.profile);
    if (problem === undefined) continue;
    const command = certifyCommand({ name: use.profile, ...profile });
    problems.push({
      severity: "error",
      code: problem.code === "receipt.missing"
        ? "config.endpoint_uncertified"
        : "config.endpoint_receipt_refused",
      message: `${use.key}: role '${use.role}' is merge-critical and endpoint '${use.profile}' ` +
        `is not certified: ${problem.message} [${problem.code}]`,
      location: locate(use.key, true) ?? "effective configuration",
      hint: `run: ${command}`,
    });
  }
  return problems;
}
