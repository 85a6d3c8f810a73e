// `deno task compile`: builds `bernstein` and `bernstein-verify` for every target with its
// permission set baked in (deno.json "permissions"; --no-prompt), then archives, SHA256SUMS, a
// Homebrew formula and a scoop manifest under dist/<version>/.
//
// `deno compile` downloads its runtime (denort) per target; where that host is unreachable a
// target fails and is reported, and the script exits 1. With DENORT_BIN set (tests), only
// targets whose executable format matches that binary can be written.
import { parseArgs } from "node:util";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";
import { sha256Hex } from "../src/crypto/mod.ts";
import { VERSION } from "../src/meta/mod.ts";
import { COMPILE_INCLUDES, v8FlagsArg } from "./runtime_flags.ts";
import {
  archiveName,
  binaryName,
  homebrewFormula,
  type ReleaseInfo,
  scoopManifest,
  sha256Sums,
  type Target,
  TARGETS,
} from "./release_manifests.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The two binaries: entry point and permission set. */
const BINARIES = [
  { name: "bernstein", entry: "main.ts", permissionSet: "bernstein" },
  { name: "bernstein-verify", entry: "verify.ts", permissionSet: "verify" },
] as const;

/** The `net` hosts of a permission set in deno.json; undefined when it grants all or none. */
async function declaredNet(permissionSet: string): Promise<string[] | undefined> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const net = config.permissions?.[permissionSet]?.net;
  return Array.isArray(net) ? net : undefined;
}

/**
 * `--net-host` values: `host`, `host:port`, `[v6]` or `[v6]:port`, as Deno's net grant takes
 * them. Anything else (a scheme, a path, spaces, a wildcard) is refused.
 */
export function checkNetHost(value: string): string | undefined {
  const host =
    /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/
      .exec(value);
  if (host === null) return `'${value}' is not host, host:port or [ipv6]:port`;
  if (host[1] !== undefined && !(Number(host[1]) > 0 && Number(host[1]) < 65536)) {
    return `port ${host[1]} is out of range`;
  }
  return undefined;
}

async function compileOne(
  entry: string,
  permissionSet: string,
  target: Target,
  output: string,
  netHosts: readonly string[] = [],
  typeCheck = true,
): Promise<string | undefined> {
  // Extra hosts (a shared PostgreSQL / Redis) widen only this set's net grant; an explicit
  // --allow-net replaces the set's own `net`, so the declared hosts are repeated. A set whose
  // grant is already every host (`net: true`) is left as it is.
  const declared = netHosts.length === 0 ? undefined : await declaredNet(permissionSet);
  const net = declared === undefined ? [] : [`--allow-net=${[...declared, ...netHosts].join(",")}`];
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "compile",
      "-q",
      "--frozen",
      "--no-prompt",
      ...(typeCheck ? [] : ["--no-check"]),
      `--config=${join(ROOT, "deno.json")}`,
      `-P=${permissionSet}`,
      ...net,
      v8FlagsArg(),
      ...(COMPILE_INCLUDES[entry] ?? []).map((m) => `--include=${join(ROOT, m)}`),
      "--target",
      target.triple,
      "--output",
      output,
      join(ROOT, entry),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code === 0) return undefined;
  return new TextDecoder().decode(out.stderr).trim().split("\n").filter((l) => l.trim() !== "")
    .slice(0, 3).join(" | ");
}

async function tarGz(dir: string, names: string[], output: string): Promise<void> {
  // Reproducible: sorted names, fixed mtime and owner, no gzip timestamp.
  const tar = await new Deno.Command("tar", {
    args: [
      "--sort=name",
      "--mtime=@0",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "-C",
      dir,
      "-cf",
      "-",
      ...names,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (tar.code !== 0) throw new Error(new TextDecoder().decode(tar.stderr));
  const gz = new Deno.Command("gzip", { args: ["-n", "-9"], stdin: "piped", stdout: "piped" })
    .spawn();
  const w = gz.stdin.getWriter();
  const result = gz.output();
  await w.write(tar.stdout);
  await w.close();
  await Deno.writeFile(output, (await result).stdout);
}

async function zipFiles(dir: string, names: string[], output: string): Promise<void> {
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  for (const n of [...names].sort()) {
    entries[n] = [await Deno.readFile(join(dir, n)), { mtime: new Date(1980, 0, 1) }];
  }
  await Deno.writeFile(output, zipSync(entries, { level: 9 }));
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      target: { type: "string", multiple: true },
      out: { type: "string" },
      "net-host": { type: "string", multiple: true },
      "no-check": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(
      "deno task compile [--target TRIPLE ...] [--out DIR] [--net-host HOST[:PORT] ...] " +
        "[--no-check]\n\n" +
        "--net-host adds a host (a shared PostgreSQL or Redis) to the network grant of the\n" +
        "bernstein binary, which is loopback only by default. bernstein-verify gets no network.\n" +
        "--no-check skips deno compile's type check of each binary's graph (~25 s of CPU cold):\n" +
        "for the compile test, whose suite type-checks the same sources; a release keeps it.\n\n" +
        "Targets: " + TARGETS.map((t) => t.triple).join(", "),
    );
    Deno.exit(0);
  }
  const chosen = values.target?.length
    ? TARGETS.filter((t) => values.target?.includes(t.triple))
    : [...TARGETS];
  const unknown = (values.target ?? []).filter((t) => !TARGETS.some((x) => x.triple === t));
  if (unknown.length > 0) {
    console.error(
      `error[compile.unknown_target]: ${unknown.join(", ")} (known: ${
        TARGETS.map((t) => t.triple).join(", ")
      })`,
    );
    Deno.exit(2);
  }
  const netHosts = values["net-host"] ?? [];
  for (const host of netHosts) {
    const problem = checkNetHost(host);
    if (problem !== undefined) {
      console.error(`error[compile.bad_net_host]: --net-host ${problem}`);
      Deno.exit(2);
    }
  }
  if (netHosts.length > 0 && (await declaredNet("bernstein")) === undefined) {
    console.error(
      "note: the bernstein permission set already allows every host (or none is declared); " +
        "--net-host changes nothing",
    );
  }
  const dist = values.out ?? join(ROOT, "dist", VERSION);
  await Deno.mkdir(dist, { recursive: true });
  const info = JSON.parse(
    await Deno.readTextFile(join(ROOT, "scripts", "release.json")),
  ) as ReleaseInfo;
  const digests = new Map<string, string>();
  let failures = 0;
  for (const target of chosen) {
    const stage = join(dist, target.triple);
    await Deno.mkdir(stage, { recursive: true });
    const built: string[] = [];
    for (const b of BINARIES) {
      const name = binaryName(b.name, target);
      const error = await compileOne(
        b.entry,
        b.permissionSet,
        target,
        join(stage, name),
        b.name === "bernstein" ? netHosts : [],
        values["no-check"] !== true,
      );
      if (error !== undefined) {
        console.error(`FAIL ${target.triple} ${b.name}: ${error}`);
        failures++;
        continue;
      }
      built.push(name);
      console.log(`built ${target.triple}/${name}`);
    }
    if (built.length !== BINARIES.length) continue;
    const archive = join(dist, archiveName(VERSION, target));
    if (target.os === "windows") await zipFiles(stage, built, archive);
    else await tarGz(stage, built, archive);
    digests.set(basename(archive), sha256Hex(await Deno.readFile(archive)));
  }
  await Deno.writeTextFile(join(dist, "SHA256SUMS"), sha256Sums(digests));
  await Deno.writeTextFile(join(dist, "bernstein.rb"), homebrewFormula(info, VERSION, digests));
  await Deno.writeTextFile(join(dist, "bernstein.json"), scoopManifest(info, VERSION, digests));
  console.log(
    `${digests.size} archive(s), SHA256SUMS, bernstein.rb (Homebrew) and bernstein.json (scoop) in ${dist}`,
  );
  if (failures > 0) {
    console.error(
      `${failures} binary build(s) failed (deno compile must download its runtime for each target)`,
    );
    Deno.exit(1);
  }
}
