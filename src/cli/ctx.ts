// `bernstein ctx …`: operating contexts — a named configuration layer (server URL, store DSN,
// any key), activated atomically and recorded on the audit chain with its settings hash.
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, stringArg, stringFlag, stringsFlag } from "./spec.ts";
import { fleetProject, printJson } from "./_fleet.ts";

async function store(ctx: CommandContext, create: boolean) {
  const fleet = await import("../fleet/mod.ts");
  const { paths, auditKey } = await fleetProject(ctx, create);
  return { fleet, contexts: new fleet.ContextStore({ sdd: paths.sdd, auditKey }) };
}

function settingsLines(ctx: CommandContext, settings: object, prefix = ""): void {
  for (const [k, v] of Object.entries(settings)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      settingsLines(ctx, v, `${prefix}${k}.`);
    } else ctx.out.line(`  ${prefix}${k} = ${JSON.stringify(v)}`);
  }
}

async function create(ctx: CommandContext): Promise<number> {
  const { fleet, contexts } = await store(ctx, true);
  const name = fleet.checkFleetName(stringArg(ctx, "name") ?? "", "context");
  const settings = await fleet.contextSettings({
    serverUrl: stringFlag(ctx, "server-url"),
    storeDsn: stringFlag(ctx, "store-dsn"),
    set: stringsFlag(ctx, "set"),
  });
  const view = await contexts.create(name, settings, { replace: booleanFlag(ctx, "replace") });
  if (ctx.json) printJson(ctx, view);
  else {
    ctx.out.line(`context ${name}: ${view.settings_hash}${view.active ? " (active)" : ""}`);
    settingsLines(ctx, view.settings);
  }
  return 0;
}

async function use(ctx: CommandContext): Promise<number> {
  const { fleet, contexts } = await store(ctx, true);
  const { UsageError } = await import("../errors/mod.ts");
  const given = stringArg(ctx, "name");
  const none = booleanFlag(ctx, "none");
  if ((given === undefined) === !none) {
    throw new UsageError("fleet.bad_name", "give a context name or --none", {
      hint: "bernstein ctx use staging | bernstein ctx use --none",
    });
  }
  const name = none ? null : fleet.checkFleetName(given as string, "context");
  const view = await contexts.use(name);
  if (ctx.json) printJson(ctx, { active: view });
  else if (view === null) ctx.out.line("no context active (configuration as without contexts)");
  else ctx.out.line(`context ${view.name} active: ${view.settings_hash}`);
  return 0;
}

async function show(ctx: CommandContext): Promise<number> {
  const { fleet, contexts } = await store(ctx, false);
  const given = stringArg(ctx, "name");
  const view = given === undefined
    ? await contexts.active()
    : await contexts.show(fleet.checkFleetName(given, "context"));
  if (ctx.json) {
    printJson(ctx, { context: view ?? null });
    return 0;
  }
  if (view === undefined) {
    ctx.out.line("no context active ('bernstein ctx use NAME' activates one)");
    return 0;
  }
  ctx.out.line(`${view.name}${view.active ? " (active)" : ""}: ${view.settings_hash}`);
  settingsLines(ctx, view.settings);
  return 0;
}

async function list(ctx: CommandContext): Promise<number> {
  const { contexts } = await store(ctx, false);
  const views = await contexts.list();
  if (ctx.json) {
    printJson(ctx, { contexts: views });
    return 0;
  }
  if (views.length === 0) ctx.out.line("no contexts ('bernstein ctx create NAME …' creates one)");
  for (const v of views) ctx.out.line(`${v.active ? "*" : " "} ${v.name}  ${v.settings_hash}`);
  return 0;
}

const NAME_HELP = "Context name: [a-z0-9][a-z0-9._-]*.";
const VIEW_JSON = "{name, settings_hash, settings, active} (store URL passwords shown as ***)";

/** The `ctx` commands. */
export const CTX_COMMANDS: CommandSpec[] = [
  {
    path: ["ctx", "create"],
    summary: "Create a named operating context (a configuration layer).",
    description:
      "Writes .sdd/fleet/contexts/NAME.json, the canonical document of the settings, and records " +
      "fleet.context_create with its settings hash (equal content gives equal bytes and hash on " +
      "every install). --server-url sets workers.url (where 'bernstein worker' connects), " +
      "--store-dsn sets storage.database_url, --set any key (value parsed as YAML, as in " +
      "'config set'); keys are checked against the configuration schema (fleet.bad_setting, " +
      `exit 2). With --json, one JSON document: ${VIEW_JSON}.`,
    args: [{ name: "name", required: true, help: NAME_HELP }],
    flags: [
      {
        name: "server-url",
        type: "string",
        valueName: "URL",
        help: "Orchestrator URL (workers.url).",
      },
      {
        name: "store-dsn",
        type: "string",
        valueName: "DSN",
        help: "Task store URL (storage.database_url).",
      },
      {
        name: "set",
        type: "string",
        multiple: true,
        valueName: "KEY=VALUE",
        help: "Any configuration key.",
      },
      {
        name: "replace",
        type: "boolean",
        help: "Replace an existing context (re-activated if active).",
      },
    ],
    json: true,
    examples: ["bernstein ctx create staging --server-url http://10.0.0.5:8052 --set max_agents=2"],
    run: create,
  },
  {
    path: ["ctx", "use"],
    summary:
      "Activate a context (or --none): one layer between .sdd/config.yaml and bernstein.yaml.",
    description: "Writes .sdd/fleet/contexts/active.json by rename (atomic) and records " +
      "fleet.context_activate with the context's settings hash. The context's settings become " +
      "the 'context:NAME' layer of the configuration: above .sdd/config.yaml, below a plan's " +
      "defaults, bernstein.yaml, the overlay, environment and flags. --none removes the layer. " +
      "Unknown name: fleet.unknown_context (exit 2). With --json, one JSON document: {active: " +
      `${VIEW_JSON} or null}.`,
    args: [{ name: "name", help: NAME_HELP }],
    flags: [{ name: "none", type: "boolean", help: "Deactivate: no context layer." }],
    json: true,
    run: use,
  },
  {
    path: ["ctx", "show"],
    summary: "Show the active context (or NAME) and its settings hash.",
    description: `With --json, one JSON document: {context: ${VIEW_JSON} or null}.`,
    args: [{ name: "name", help: NAME_HELP }],
    json: true,
    run: show,
  },
  {
    path: ["ctx", "list"],
    summary: "List contexts (* marks the active one).",
    description: `With --json, one JSON document: {contexts: [${VIEW_JSON}]}.`,
    json: true,
    run: list,
  },
];
