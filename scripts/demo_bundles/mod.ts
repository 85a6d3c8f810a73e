// The reference scenarios of examples/lineage/ (`deno task demo:fintech`, `demo:healthcare`,
// `demo:eu-mfg`; `make -C examples/lineage demo-…`): each runs real `bernstein run`s with the
// scripted agent in a throw-away repository, builds compliance packs and checks them with
// `bernstein-verify`, printing the transcript. `--out DIR` keeps everything in DIR (else a
// temp folder, kept and named at the end); `--update` rewrites the checked-in bundle under
// examples/lineage/<folder>/bundle/ when its transcript or summary drifted (what `deno task
// docs` runs; an up-to-date bundle is left alone, since every run signs different bytes).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EU_MANUFACTURER } from "./eu_mfg.ts";
import { FINTECH } from "./fintech.ts";
import { HEALTHCARE } from "./healthcare.ts";
import { generate, type Generated, type Scenario, SUMMARY, TRANSCRIPT } from "./_scenario.ts";

export { generate, type Generated, type Scenario, SUMMARY, TRANSCRIPT } from "./_scenario.ts";
export { packMembers, packSummary } from "./_summary.ts";
export { mappingReferences, missingReferences } from "./_mapping.ts";
export { exampleOperatorFingerprint } from "./_example_keys.ts";
export { normaliseTranscript } from "./_normalise.ts";

/** The scenarios by the name the tasks and the Makefile use. */
export const SCENARIOS: Record<string, Scenario> = {
  fintech: FINTECH,
  healthcare: HEALTHCARE,
  "eu-mfg": EU_MANUFACTURER,
};

/** examples/lineage/ in this checkout. */
export const EXAMPLES_DIR: string = fileURLToPath(
  new URL("../../examples/lineage/", import.meta.url),
);

/** The checked-in bundle folder of a scenario. */
export function bundleDir(scenario: Scenario): string {
  return join(EXAMPLES_DIR, scenario.folder, "bundle");
}

/**
 * The checked-in files whose stable parts (transcript, summary) differ from `generated`'s;
 * empty when the bundle is up to date.
 */
export async function driftedFiles(scenario: Scenario, generated: Generated): Promise<string[]> {
  const drifted: string[] = [];
  for (const name of [TRANSCRIPT, SUMMARY]) {
    const have = await Deno.readFile(join(bundleDir(scenario), name)).catch(() => undefined);
    const want = generated.bundle.get(name) as Uint8Array;
    if (have === undefined || have.length !== want.length || have.some((b, i) => b !== want[i])) {
      drifted.push(name);
    }
  }
  return drifted;
}

/**
 * Replaces the checked-in bundle of `scenario` with `generated` when its stable parts drifted;
 * otherwise leaves it alone (a new run's packs differ in bytes, not in what they show). True
 * when it was rewritten.
 */
export async function updateBundle(scenario: Scenario, generated: Generated): Promise<boolean> {
  if ((await driftedFiles(scenario, generated)).length === 0) return false;
  const dir = bundleDir(scenario);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, bytes] of generated.bundle) {
    await Deno.mkdir(join(dir, name, ".."), { recursive: true });
    await Deno.writeFile(join(dir, name), bytes);
  }
  return true;
}

const USAGE = "usage: scripts/demo_bundles/mod.ts (fintech|healthcare|eu-mfg|all)… " +
  "[--out DIR] [--update]";

/** What the command line asks for, or why it cannot be done (one line). */
export type DemoArgs =
  | { ok: true; names: string[]; out?: string; update: boolean }
  | { ok: false; error: string };

/** Parses the command line: scenario names (deduplicated, in order), `--out DIR`, `--update`. */
export function parseDemoArgs(args: readonly string[]): DemoArgs {
  const names: string[] = [];
  let out: string | undefined;
  let update = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--out") {
      out = args[++i];
      if (out === undefined || out === "") return { ok: false, error: "--out needs a folder" };
    } else if (a === "--update") update = true;
    else if (a === "all") names.push(...Object.keys(SCENARIOS));
    else if (Object.hasOwn(SCENARIOS, a)) names.push(a);
    else {
      return {
        ok: false,
        error: `${a}: unknown scenario or flag (scenarios: ${
          Object.keys(SCENARIOS).join(", ")
        }, all)`,
      };
    }
  }
  if (names.length === 0) return { ok: false, error: "name a scenario" };
  return { ok: true, names: [...new Set(names)], out, update };
}

/** A folder that must be absent or empty (where a scenario is generated). */
async function emptyOrAbsent(dir: string): Promise<string | undefined> {
  try {
    for await (const _ of Deno.readDir(dir)) return `--out ${dir}: not empty`;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `--out ${dir}: ${(error as Error).message}`;
  }
  return undefined;
}

async function main(args: string[]): Promise<number> {
  const parsed = parseDemoArgs(args);
  if (!parsed.ok) {
    console.error(`error: ${parsed.error}\n${USAGE}`);
    return 2;
  }
  const { names, out, update } = parsed;
  const dirOf = (name: string) =>
    out === undefined ? undefined : names.length > 1 ? join(out, name) : out;
  for (const name of names) {
    const dir = dirOf(name);
    const problem = dir === undefined ? undefined : await emptyOrAbsent(dir);
    if (problem !== undefined) {
      console.error(`error: ${problem}\n${USAGE}`);
      return 2;
    }
  }
  for (const name of names) {
    const scenario = SCENARIOS[name];
    const dir = dirOf(name) ?? await Deno.makeTempDir({ prefix: `bernstein-${name}-` });
    let generated: Generated;
    try {
      generated = await generate(scenario, dir);
    } catch (error) {
      console.error(`${name} FAILED: ${(error as Error).message}`);
      console.error(`${name}: what it left is in ${dir}`);
      return 1;
    }
    if (update) {
      const rewritten = await updateBundle(scenario, generated);
      if (out === undefined) await Deno.remove(dir, { recursive: true });
      console.log(
        `examples/lineage/${scenario.folder}/bundle ${rewritten ? "regenerated" : "is up to date"}`,
      );
      continue;
    }
    console.log(new TextDecoder().decode(generated.bundle.get(TRANSCRIPT)));
    console.log(`${name}: the repository, packs and keys are in ${generated.dir}`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
