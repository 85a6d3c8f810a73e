/**
 * The secrets of a run, for the `secrets` gate: the operator token and the audit key (read from
 * their files), the lineage operator secret, and the value of every provider key the
 * configuration can hand an agent (the adapters' key variables, `adapters.<name>.env`,
 * `local_endpoints.<name>.api_key_env`, GitHub tokens) and of the notification secrets
 * (`notify.webhook.secret_env` / `url_env`, `notify.email.password_env`). Values only live in
 * memory.
 */
import { ADAPTERS } from "../adapters/mod.ts";
import type { Config } from "../config/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import type { Secret } from "./secrets_gate.ts";

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)/;

/** The variable names whose values are secrets for this configuration. */
export function secretVariableNames(
  config: Pick<Config, "adapters" | "local_endpoints" | "notify">,
): string[] {
  const names = new Set<string>(["BERNSTEIN_OPERATOR_SECRET", "GITHUB_TOKEN", "GH_TOKEN"]);
  for (const a of ADAPTERS) for (const n of a.env) if (SECRET_NAME.test(n)) names.add(n);
  for (const s of Object.values(config.adapters ?? {})) {
    for (const n of s.env ?? []) if (SECRET_NAME.test(n)) names.add(n);
  }
  for (const e of Object.values(config.local_endpoints ?? {})) {
    if (e.api_key_env !== undefined) names.add(e.api_key_env);
  }
  // A chat hook's URL is its key; the HMAC secret and the SMTP password are secrets.
  const notify = config.notify;
  for (
    const n of [notify?.webhook?.secret_env, notify?.webhook?.url_env, notify?.email?.password_env]
  ) {
    if (n !== undefined) names.add(n);
  }
  return [...names].sort();
}

/** The run's secrets: the key files' contents and the set secret variables' values. */
export async function runSecrets(
  config: Pick<Config, "adapters" | "local_endpoints" | "notify">,
  env: EnvReader,
  files: { auditKey: string; operatorToken: string },
): Promise<Secret[]> {
  const secrets: Secret[] = [];
  const read = async (path: string) => (await Deno.readTextFile(path).catch(() => "")).trim();
  const auditKey = await read(files.auditKey);
  if (auditKey !== "") secrets.push({ name: "the audit key", value: auditKey });
  const token = await read(files.operatorToken);
  if (token !== "") secrets.push({ name: "the operator token", value: token });
  for (const name of secretVariableNames(config)) {
    const value = env.get(name);
    if (value !== undefined && value.trim() !== "") secrets.push({ name: `$${name}`, value });
  }
  return secrets;
}
