// `bernstein config set`: parses a dotted key and a YAML value and writes it into the
// workspace configuration (`.sdd/config.yaml`) without touching tracked files. The yaml package
// (CommonJS, ~70 ms of CPU to evaluate) is loaded here when a value is parsed or written, not by
// every bernstein start that reads the configuration.
import { closestMatch, UsageError } from "../errors/mod.ts";
import { sddFile, writeFileAtomic } from "../io/mod.ts";
import { ConfigError } from "./errors.ts";
import { isPlainObject, setPath } from "./merge.ts";
import type { ProjectPaths } from "./project.ts";
import { knownKeysAt, validateLayer } from "./resolve.ts";
import { objectLayer } from "./yaml_layer.ts";

/** Splits and checks a dotted key against the schema; unknown segments suggest the closest. */
export function parseConfigKey(dotted: string): string[] {
  const path = dotted.split(".");
  if (path.some((seg) => seg === "")) {
    throw new UsageError(
      "config.bad_key",
      `'${dotted}' is not a dotted key such as tuning.agent.max_turns`,
    );
  }
  for (let i = 0; i < path.length; i++) {
    const known = knownKeysAt(path.slice(0, i));
    // No known keys below a record (role names, endpoint names): any name is allowed there.
    if (known.length === 0) break;
    if (!known.includes(path[i])) {
      const near = closestMatch(path[i], known);
      const prefix = path.slice(0, i).join(".");
      throw new UsageError(
        "config.unknown_key",
        `unknown key '${path[i]}'${prefix ? ` in ${prefix}` : ""}`,
        {
          hint: near
            ? `did you mean '${[...path.slice(0, i), near].join(".")}'?`
            : "run 'bernstein config list'",
        },
      );
    }
  }
  return path;
}

/** Parses a value given on the command line as YAML (`8`, `true`, `[a, b]`, `text`). */
export async function parseConfigValue(text: string): Promise<unknown> {
  const { parse: parseYaml } = await import("yaml");
  try {
    return parseYaml(text);
  } catch {
    return text;
  }
}

/**
 * Sets one key in `.sdd/config.yaml` (never the tracked bernstein.yaml), keeping the file's
 * comments. The new value is validated before anything is written.
 */
export async function setWorkspaceValue(
  project: ProjectPaths,
  dotted: string,
  valueText: string,
): Promise<{
  path: string;
  value: unknown;
}> {
  const keyPath = parseConfigKey(dotted);
  const value = await parseConfigValue(valueText);
  const file = sddFile(project.sdd, "config");
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(project.sdd, { recursive: true });
  }
  const { parseDocument } = await import("yaml");
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    throw new ConfigError(
      "config.yaml_syntax",
      `${file} is not valid YAML; fix it before 'config set'`,
    );
  }
  const current = doc.toJS() ?? {};
  if (!isPlainObject(current)) {
    throw new ConfigError("config.not_a_mapping", `${file} is not a mapping`);
  }
  const candidate = setPath(current, keyPath, value);
  const checked = validateLayer(objectLayer(dotted, candidate));
  // A watchdog value that would be ignored at load time is refused here rather than written.
  const errors = checked.problems.filter((p) =>
    p.severity === "error" || p.code === "config.unknown_key" ||
    p.code === "config.watchdog_invalid"
  );
  if (errors.length > 0) {
    throw new UsageError("config.invalid_value", errors[0].message);
  }
  doc.setIn(keyPath, value);
  await writeFileAtomic(file, doc.toString());
  return { path: file, value };
}
