// `bernstein var …`: fleet variables — named JSON values whose every write is an audit-chain
// event, read from the chain alone (docs/FLEET.md).
import type { CommandContext, CommandSpec } from "./spec.ts";
import { stringArg, stringFlag, stringsFlag } from "./spec.ts";
import { fleetProject, printJson, printWarnings } from "./_fleet.ts";

const NAME_HELP = "Variable name: [a-z0-9][a-z0-9._-]*.";

async function store(ctx: CommandContext, create: boolean) {
  const fleet = await import("../fleet/mod.ts");
  const { paths, auditKey } = await fleetProject(ctx, create);
  return { fleet, paths, vars: new fleet.VariableStore({ sdd: paths.sdd, auditKey }) };
}

/** VALUE, or the contents of `--file` (checked against the cap before it is read). */
async function valueText(ctx: CommandContext): Promise<string> {
  const { UsageError } = await import("../errors/mod.ts");
  const given = stringArg(ctx, "value");
  const file = stringFlag(ctx, "file");
  if ((given === undefined) === (file === undefined)) {
    throw new UsageError("fleet.bad_value", "give the value either as VALUE or with --file", {
      hint: "bernstein var set NAME VALUE | bernstein var set NAME --file value.json",
    });
  }
  if (given !== undefined) return given;
  const { resolve } = await import("node:path");
  const fleet = await import("../fleet/mod.ts");
  const path = resolve(ctx.cwd, file as string);
  let size: number;
  try {
    size = (await Deno.stat(path)).size;
  } catch (error) {
    throw new UsageError("fleet.bad_value", `cannot read --file: ${(error as Error).message}`, {
      location: path,
    });
  }
  if (size > fleet.MAX_VALUE_BYTES) {
    throw new fleet.FleetError(
      "fleet.value_too_large",
      `value is ${size} bytes; the limit is ${fleet.MAX_VALUE_BYTES} bytes (1 MiB)`,
      {
        location: path,
        hint: "keep large data in the repository and put its path in the variable",
      },
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(await Deno.readFile(path));
  } catch (error) {
    throw new UsageError(
      "fleet.bad_value",
      `--file is not UTF-8 text: ${(error as Error).message}`,
      {
        location: path,
      },
    );
  }
}

function actorOf(ctx: CommandContext): string {
  return stringFlag(ctx, "actor") ?? "operator";
}

async function set(ctx: CommandContext): Promise<number> {
  const { fleet, vars } = await store(ctx, true);
  const name = fleet.checkFleetName(stringArg(ctx, "name") ?? "", "variable");
  const value = fleet.parseValueText(await valueText(ctx));
  const w = await vars.set(name, value, actorOf(ctx));
  printWarnings(ctx, vars.warnings);
  if (ctx.json) printJson(ctx, { name, ...w });
  else {
    ctx.out.line(
      `${name}: write ${w.ordinal} ${w.new_value_hash}` +
        (w.old_value_hash === "" ? "" : ` (was ${w.old_value_hash.slice(0, 19)}…)`),
    );
  }
  return 0;
}

async function unset(ctx: CommandContext): Promise<number> {
  const { fleet, vars } = await store(ctx, true);
  const name = fleet.checkFleetName(stringArg(ctx, "name") ?? "", "variable");
  const w = await vars.unset(name, actorOf(ctx));
  printWarnings(ctx, vars.warnings);
  if (ctx.json) printJson(ctx, { name, ...w });
  else ctx.out.line(`${name}: unset (write ${w.ordinal}; history kept on the chain)`);
  return 0;
}

async function get(ctx: CommandContext): Promise<number> {
  const { fleet, vars } = await store(ctx, false);
  const name = fleet.checkFleetName(stringArg(ctx, "name") ?? "", "variable");
  const r = await vars.get(name);
  printWarnings(ctx, vars.warnings);
  if (ctx.json) {
    printJson(ctx, {
      name,
      value: r.value,
      value_hash: r.value_hash,
      chain_position: r.write.ordinal,
      actor: r.write.actor,
      timestamp: r.write.timestamp,
      where: r.write.where,
    });
  } else ctx.out.line(fleet.renderValue(r.value, r.bytes));
  return 0;
}

async function list(ctx: CommandContext): Promise<number> {
  const { vars } = await store(ctx, false);
  const rows = await vars.list();
  printWarnings(ctx, vars.warnings);
  if (ctx.json) {
    printJson(ctx, { variables: rows });
    return 0;
  }
  if (rows.length === 0) {
    ctx.out.line("no variables ('bernstein var set NAME VALUE' creates one)");
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const table = [["NAME", "WRITE", "VALUE HASH"]].concat(
    rows.map((r) => [r.name, String(r.chain_position), r.value_hash]),
  );
  for (const line of alignColumns(table)) ctx.out.line(line);
  return 0;
}

async function history(ctx: CommandContext): Promise<number> {
  const { fleet, vars } = await store(ctx, false);
  const { BernsteinError } = await import("../errors/mod.ts");
  const name = fleet.checkFleetName(stringArg(ctx, "name") ?? "", "variable");
  const h = await vars.history(name);
  printWarnings(ctx, vars.warnings);
  const between = stringsFlag(ctx, "between");
  if (between.length > 0) {
    if (between.length !== 2) {
      throw new BernsteinError("fleet.bad_reference", "--between takes two task ids", {
        hint: "bernstein var history NAME --between TASK_A --between TASK_B",
        exitCode: 2,
      });
    }
    const [a, b] = between.map((t) => {
      const read = h.reads.findLast((r) => r.task_id === t);
      if (read === undefined) {
        throw new fleet.FleetError("fleet.unknown_name", `task '${t}' never read '${name}'`, {
          hint: `tasks that read it: ${
            [...new Set(h.reads.map((r) => r.task_id))].join(", ") || "none"
          }`,
        });
      }
      return read;
    });
    const d = fleet.explainDivergence(h, a, b);
    if (ctx.json) {
      printJson(ctx, { name, ...d });
      return 0;
    }
    for (const r of d.reads) {
      ctx.out.line(`${r.task_id} read write ${r.ordinal} (${r.value_hash}) at ${r.where}`);
    }
    if (d.same) ctx.out.line("both read the same value");
    for (const w of d.writes) {
      ctx.out.line(
        `between them: write ${w.ordinal} by ${w.actor} at ${w.timestamp} (${w.where}): ` +
          `${w.old_value_hash || "(none)"} → ${w.new_value_hash || "(unset)"}`,
      );
    }
    return 0;
  }
  if (ctx.json) {
    printJson(ctx, { name, writes: h.writes, reads: h.reads });
    return 0;
  }
  for (const w of h.writes) {
    ctx.out.line(
      `write ${w.ordinal}  ${w.timestamp}  ${w.actor}  ${
        w.kind === "unset" ? "unset" : w.new_value_hash
      }  ${w.where}`,
    );
  }
  for (const r of h.reads) {
    ctx.out.line(`read of write ${r.ordinal} by task ${r.task_id} (run ${r.run_id})  ${r.where}`);
  }
  return 0;
}

async function pins(ctx: CommandContext): Promise<number> {
  const fleet = await import("../fleet/mod.ts");
  const { checkSpineRunId } = await import("../lineage/store/mod.ts");
  const { paths, auditKey } = await fleetProject(ctx, false);
  const runId = checkSpineRunId(stringArg(ctx, "run-id") ?? "");
  const task = stringFlag(ctx, "task");
  const reads = (await fleet.replayRunPins(paths.sdd, runId, auditKey))
    .filter((r) => task === undefined || r.task_id === task);
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  if (ctx.json) {
    printJson(ctx, {
      run_id: runId,
      pins: reads.map(({ bytes, ...r }) => ({ ...r, value_json: text(bytes) })),
    });
    return 0;
  }
  if (reads.length === 0) ctx.out.line(`run ${runId} pinned no variable reads`);
  for (const r of reads) {
    ctx.out.line(`${r.task_id}  ${r.name}@${r.chain_position}  ${r.value_hash}  ${text(r.bytes)}`);
  }
  return 0;
}

const JSON_WRITE = "With --json, one JSON document: the write as recorded, " +
  "{name, ordinal, kind, old_value_hash, new_value_hash, actor, timestamp, where, hmac}.";

/** The `var` commands. */
export const VAR_COMMANDS: CommandSpec[] = [
  {
    path: ["var", "set"],
    summary: "Set a variable (a JSON value; a bare word is a string).",
    description:
      "Stores the value's canonical bytes as a content-addressed blob under .sdd/fleet/variables/ " +
      "and records a fleet.var_set audit event with the old and new value hashes and the " +
      "variable's next write ordinal. Concurrent writers are serialised: ordinals stay " +
      "contiguous. Values are at most 1 MiB. Tasks read variables through ${var:NAME} in plan " +
      "steps; the value is pinned at the task's first claim. " + JSON_WRITE +
      " Errors: fleet.bad_name, fleet.bad_value, fleet.value_too_large (exit 2).",
    args: [
      { name: "name", required: true, help: NAME_HELP },
      { name: "value", help: 'JSON (5, true, "text", {"a":1}) or a bare word (or --file).' },
    ],
    flags: [
      { name: "actor", type: "string", valueName: "WHO", help: "Who writes (default operator)." },
      {
        name: "file",
        type: "string",
        valueName: "FILE",
        help: "Read the value (JSON) from a file.",
      },
    ],
    json: true,
    examples: [
      "bernstein var set threshold 5",
      "bernstein var set mode fast",
      `bernstein var set limits '{"cpu":2}'`,
    ],
    run: set,
  },
  {
    path: ["var", "get"],
    summary: "Print a variable's current value (from the chain head).",
    description:
      "The value of the variable's latest write on the audit chain, read from its blob and " +
      "re-hashed (a changed blob is fleet.blob_tampered, exit 1). A string prints as itself, " +
      "anything else as canonical JSON. With --json, one JSON document: {name, value, value_hash, chain_position, " +
      "actor, timestamp, where}. Unknown name: fleet.unknown_name (exit 2).",
    args: [{ name: "name", required: true, help: NAME_HELP }],
    json: true,
    run: get,
  },
  {
    path: ["var", "list"],
    summary: "List variables and their current value hashes.",
    description:
      "With --json, one JSON document: {variables: [{name, value_hash, chain_position, writes}]}.",
    json: true,
    run: list,
  },
  {
    path: ["var", "history"],
    summary: "Every write and claim-time read of a variable, from the chain alone.",
    description: "Reads the audit chain only (no server, no live state). With --between TASK_A " +
      "--between TASK_B: the two tasks' pinned reads and the writes that landed between " +
      "their positions — why they read different values. With --json, one JSON document: {name, writes, reads} " +
      "or {name, reads, same, writes}.",
    args: [{ name: "name", required: true, help: NAME_HELP }],
    flags: [{
      name: "between",
      type: "string",
      multiple: true,
      valueName: "TASK",
      help: "Explain two tasks' reads (give it twice).",
    }],
    json: true,
    examples: ["bernstein var history threshold --between 1.1-a --between 2.1-b"],
    run: history,
  },
  {
    path: ["var", "unset"],
    summary: "Remove a variable (recorded on the chain; its history stays).",
    description: "Records a fleet.var_unset write. " + JSON_WRITE,
    args: [{ name: "name", required: true, help: NAME_HELP }],
    flags: [{
      name: "actor",
      type: "string",
      valueName: "WHO",
      help: "Who writes (default operator).",
    }],
    json: true,
    run: unset,
  },
  {
    path: ["var", "pins"],
    summary: "Replay a run's pinned variable reads from their hashes (never the live value).",
    description:
      "Verifies the run's spine and resolves every pin from its content hash, so the bytes are " +
      "the ones the task read whatever was written since. With --json, one JSON document: {run_id, pins: [{task_id, " +
      "name, chain_position, value_hash, spine_entry_hash, value_json}]}.",
    args: [{ name: "run-id", required: true, help: "The run." }],
    flags: [{ name: "task", type: "string", valueName: "TASK", help: "Only this task's pins." }],
    json: true,
    run: pins,
  },
];
