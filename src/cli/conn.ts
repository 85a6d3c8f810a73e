// `bernstein conn …`: connection documents — a secret REFERENCE (never the secret), a scope and
// connector defaults, signed with the install identity; every create, rotation, resolution and
// refusal is an audit-chain event (docs/FLEET.md).
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg, stringFlag, stringsFlag } from "./spec.ts";
import { fleetProject, printJson } from "./_fleet.ts";

async function store(ctx: CommandContext, create: boolean) {
  const fleet = await import("../fleet/mod.ts");
  const { systemRandom } = await import("../io/mod.ts");
  const { paths, auditKey } = await fleetProject(ctx, create);
  return {
    fleet,
    paths,
    random: systemRandom,
    conns: new fleet.ConnectionStore({ sdd: paths.sdd, auditKey, random: systemRandom }),
  };
}

function name(ctx: CommandContext, fleet: typeof import("../fleet/mod.ts")): string {
  return fleet.checkFleetName(stringArg(ctx, "name") ?? "", "connection");
}

function showView(ctx: CommandContext, v: import("../fleet/mod.ts").ConnectionView): void {
  ctx.out.line(`${v.name} v${v.version}  ${v.document_hash}`);
  ctx.out.line(
    `  secret  ${v.secret_ref} (a reference; the value is read only when a task resolves it)`,
  );
  ctx.out.line(`  scope   ${v.scope}`);
  for (const [k, val] of Object.entries(v.defaults)) ctx.out.line(`  ${k} = ${val}`);
  ctx.out.line(
    `  signed  ${v.kid}${
      v.signed_here ? " (this install)" : " (NOT this install: it will not resolve)"
    }`,
  );
}

async function create(ctx: CommandContext): Promise<number> {
  const { fleet, paths, random, conns } = await store(ctx, true);
  const n = name(ctx, fleet);
  const secret = fleet.parseSecretRef(stringFlag(ctx, "secret") ?? "", paths.root);
  const defaults = fleet.connectionDefaults(stringsFlag(ctx, "set"));
  const identity = await fleet.ensureInstallIdentity(paths.sdd, random);
  const view = await conns.create(identity, {
    name: n,
    secret,
    scope: stringFlag(ctx, "scope") ?? "",
    defaults,
  });
  if (ctx.json) printJson(ctx, view);
  else showView(ctx, view);
  return 0;
}

async function rotate(ctx: CommandContext): Promise<number> {
  const { fleet, paths, random, conns } = await store(ctx, true);
  const n = name(ctx, fleet);
  const secret = fleet.parseSecretRef(stringFlag(ctx, "secret") ?? "", paths.root);
  const identity = await fleet.ensureInstallIdentity(paths.sdd, random);
  const view = await conns.rotate(identity, n, { secret, scope: stringFlag(ctx, "scope") });
  if (ctx.json) printJson(ctx, view);
  else showView(ctx, view);
  return 0;
}

async function show(ctx: CommandContext): Promise<number> {
  const { fleet, conns } = await store(ctx, false);
  const view = await conns.show(name(ctx, fleet));
  if (ctx.json) printJson(ctx, view);
  else showView(ctx, view);
  return 0;
}

async function list(ctx: CommandContext): Promise<number> {
  const { conns } = await store(ctx, false);
  const views = await conns.list();
  if (ctx.json) {
    printJson(ctx, { connections: views });
    return 0;
  }
  if (views.length === 0) {
    ctx.out.line("no connections ('bernstein conn create NAME …' creates one)");
  }
  for (const v of views) {
    ctx.out.line(
      `${v.name}  v${v.version}  ${v.secret_ref}  ${v.scope}${
        v.signed_here ? "" : "  (foreign signature)"
      }`,
    );
  }
  return 0;
}

async function audit(ctx: CommandContext): Promise<number> {
  const { fleet, conns } = await store(ctx, false);
  const h = await conns.audit(name(ctx, fleet));
  if (ctx.json) {
    printJson(ctx, h);
    return 0;
  }
  for (const v of h.versions) {
    ctx.out.line(`v${v.version}  ${v.timestamp}  ${v.actor}  ${v.document_hash}  ${v.where}`);
  }
  for (const r of h.resolutions) {
    ctx.out.line(
      `resolved v${r.version} for task ${r.task_id || "(operator check)"} run ${
        r.run_id || "-"
      }  ${r.timestamp}  ${r.where}`,
    );
  }
  for (const r of h.refusals) {
    ctx.out.line(
      `REFUSED for task ${
        r.task_id || "(operator check)"
      }: ${r.reason}  ${r.timestamp}  ${r.where}`,
    );
  }
  return 0;
}

async function check(ctx: CommandContext): Promise<number> {
  const { fleet, conns } = await store(ctx, true);
  const n = name(ctx, fleet);
  const minted = await conns.resolve(n, { taskId: "", runId: "", env: ctx.env, actor: "operator" });
  const out = {
    name: n,
    version: minted.version,
    document_hash: minted.document_hash,
    token_id: minted.token_id,
    secret_bytes: new TextEncoder().encode(minted.value).length,
  };
  if (ctx.json) printJson(ctx, out);
  else {
    ctx.out.line(
      `${n} v${out.version} resolves: signature verifies against this install, the secret is ` +
        `readable (${out.secret_bytes} bytes; not shown); recorded as token ${out.token_id}`,
    );
  }
  return 0;
}

const NAME_ARG = { name: "name", required: true, help: "Connection name: [a-z0-9][a-z0-9._-]*." };
const VIEW_JSON =
  "{name, version, document_hash, secret_ref, scope, defaults, kid, signed_here} (no secret value)";
const SECRET_FLAG = {
  name: "secret",
  type: "string" as const,
  valueName: "REF",
  help: "env:NAME (or NAME) or file:/absolute/path — a reference, never the secret.",
};

/** The `conn` commands. */
export const CONN_COMMANDS: CommandSpec[] = [
  {
    path: ["conn", "create"],
    summary: "Create a signed connection document (a secret reference, a scope, defaults).",
    description: "Writes .sdd/fleet/connections/NAME/1.json, signed with the install identity " +
      "(.sdd/keys/install.key, created when missing), and records fleet.conn_create with the " +
      "document hash and an install-keyed digest of the reference (never the reference or the " +
      "secret). --secret takes env:NAME or file:/absolute/path outside the project; anything " +
      "else is fleet.bad_secret_ref (exit 2). The secret is read only when the connection " +
      `resolves. With --json, one JSON document: ${VIEW_JSON}.`,
    args: [NAME_ARG],
    flags: [
      SECRET_FLAG,
      {
        name: "scope",
        type: "string",
        valueName: "SCOPE",
        help: "What the credential may do (repo:read).",
      },
      {
        name: "set",
        type: "string",
        multiple: true,
        valueName: "KEY=VALUE",
        help: "Connector default.",
      },
    ],
    json: true,
    examples: ["bernstein conn create prod-github --secret env:GITHUB_TOKEN --scope repo:read"],
    run: create,
  },
  {
    path: ["conn", "rotate"],
    summary: "Point a connection at a new secret reference (a new signed version).",
    description:
      "Writes the next version and records fleet.conn_rotate (old and new document hashes). " +
      "Consumers name the connection, not a version: the next resolution uses the new one. " +
      `With --json, one JSON document: ${VIEW_JSON}.`,
    args: [NAME_ARG],
    flags: [
      SECRET_FLAG,
      { name: "scope", type: "string", valueName: "SCOPE", help: "A new scope (default: keep)." },
    ],
    json: true,
    run: rotate,
  },
  {
    path: ["conn", "show"],
    summary: "Show a connection's latest version (reference, scope, defaults, signer).",
    description: `With --json, one JSON document: ${VIEW_JSON}.`,
    args: [NAME_ARG],
    json: true,
    run: show,
  },
  {
    path: ["conn", "list"],
    summary: "List connections.",
    description: `With --json, one JSON document: {connections: [${VIEW_JSON}]}.`,
    json: true,
    run: list,
  },
  {
    path: ["conn", "audit"],
    summary: "Every version, resolution and refusal of a connection, offline from the chain.",
    description:
      "With --json, one JSON document: {name, versions: [{version, document_hash, actor, " +
      "timestamp, where}], resolutions: [{task_id, run_id, version, document_hash, token_id, " +
      "timestamp, where}], refusals: [{task_id, document_hash, reason, timestamp, where}]}.",
    args: [NAME_ARG],
    json: true,
    run: audit,
  },
  {
    path: ["conn", "check"],
    summary: "Resolve a connection now (signature, chain, secret readable) without showing it.",
    description:
      "Runs the resolution a task would: the latest version must match the chain and verify " +
      "against this install's identity (a document copied from another install is refused: " +
      "fleet.document_foreign), and its secret reference must be readable " +
      "(fleet.secret_unreadable). Each outcome is recorded (fleet.conn_resolve or " +
      "fleet.conn_refuse). Exit 1 on refusal. With --json, one JSON document: {name, version, " +
      "document_hash, token_id, secret_bytes}.",
    args: [NAME_ARG],
    json: true,
    run: check,
  },
];
