// The sandbox of each binary, read back from what `deno compile` embeds. The runtime cannot be
// downloaded here, so DENORT_BIN=/bin/true stands in for it: the metadata is written in full.
// The tests that only read the default build share one compile; --net-host builds its own.
// They compile with --no-check: deno compile's type check of each binary's graph (~25 s of CPU
// on a cold cache) is the suite's own check of the same sources (deno task test, deno task
// check), and what is asserted here is what the binaries carry.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  archiveName,
  homebrewFormula,
  readCompileMetadata,
  scoopManifest,
  sha256Sums,
  TARGETS,
} from "../../scripts/release_manifests.ts";
import { RUNTIME_V8_FLAGS } from "../../scripts/runtime_flags.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const LINUX = "x86_64-unknown-linux-gnu";

interface Perms {
  [key: string]: unknown;
}

async function compileBoth(
  out: string,
  extra: string[] = [],
): Promise<{ main: Perms; verify: Perms }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      "-P=dev",
      join(REPO_ROOT, "scripts", "compile.ts"),
      "--target",
      LINUX,
      "--out",
      out,
      "--no-check",
      ...extra,
    ],
    env: { DENORT_BIN: "/bin/true" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(r.code, 0, new TextDecoder().decode(r.stderr));
  const read = async (name: string) =>
    readCompileMetadata(await Deno.readFile(join(out, LINUX, name))).permissions as Perms;
  return { main: await read("bernstein"), verify: await read("bernstein-verify") };
}

/** The default build, compiled once for the tests that only read it (~4 s of CPU a compile). */
let defaultBuild: Promise<{ dir: string; main: Perms; verify: Perms }> | undefined;

function sharedBuild(): Promise<{ dir: string; main: Perms; verify: Perms }> {
  defaultBuild ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "bernstein-compile-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    return { dir, ...(await compileBoth(dir)) };
  })();
  return defaultBuild;
}

Deno.test("bernstein-verify is compiled read-only: no write, net, env, run, sys, ffi; no prompt", async () => {
  const { verify } = await sharedBuild();
  deepStrictEqual(verify.allow_read, [], "read everything ([] means unrestricted)");
  for (
    const key of ["allow_write", "allow_net", "allow_env", "allow_run", "allow_sys", "allow_ffi"]
  ) {
    strictEqual(verify[key], null, `${key} must be null`);
  }
  strictEqual(verify.prompt, false);
  // No module may be fetched at run time either ([] denies every host).
  deepStrictEqual(verify.deny_import, []);
});

Deno.test("bernstein-verify starts with no baked-in arguments, env file or preloads", async () => {
  const { dir } = await sharedBuild();
  const meta = readCompileMetadata(
    await Deno.readFile(join(dir, LINUX, "bernstein-verify")),
  );
  strictEqual(meta.entrypoint_key, "verify.ts");
  deepStrictEqual(meta.argv, []);
  deepStrictEqual(meta.env_vars_from_env_file, {});
  deepStrictEqual(meta.preload_modules, []);
  deepStrictEqual(meta.require_modules, []);
});

Deno.test("bernstein is compiled with exactly the declared permission set", async () => {
  const { main } = await sharedBuild();
  const declared =
    JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).permissions.bernstein;
  deepStrictEqual(main.allow_read, declared.read === true ? [] : declared.read);
  deepStrictEqual(main.allow_write, declared.write === true ? [] : declared.write);
  deepStrictEqual(main.allow_run, declared.run === true ? [] : declared.run);
  deepStrictEqual(main.allow_env, declared.env.allow);
  deepStrictEqual(main.ignore_env, declared.env.ignore);
  deepStrictEqual(main.allow_net, declared.net === true ? [] : declared.net);
  deepStrictEqual(main.allow_sys, declared.sys);
  strictEqual(main.allow_ffi, null);
  strictEqual(main.prompt, false);
});

Deno.test("--net-host adds exactly those hosts to bernstein's net grant; bernstein-verify stays offline", async () => {
  await withTempDir(async (dir) => {
    const { main, verify } = await compileBoth(dir, [
      "--net-host",
      "db.internal:5432",
      "--net-host",
      "[fd00::5]:6379",
    ]);
    const declared =
      JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).permissions.bernstein;
    // A set that already grants every host (net: true → []) stays so; a host list grows.
    deepStrictEqual(
      main.allow_net,
      declared.net === true ? [] : [...declared.net, "db.internal:5432", "[fd00::5]:6379"],
    );
    deepStrictEqual(main.allow_env, declared.env.allow, "the rest of the set is unchanged");
    deepStrictEqual(main.ignore_env, declared.env.ignore);
    strictEqual(main.prompt, false);
    strictEqual(verify.allow_net, null);
  });
});

Deno.test("--net-host refuses what is not a host (scheme, path, bad port) with exit 2", async () => {
  for (const bad of ["http://db", "db/x", "db:70000", "*.example.com", "a b"]) {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-q",
        "--frozen",
        "-P=dev",
        join(REPO_ROOT, "scripts", "compile.ts"),
        "--net-host",
        bad,
      ],
      env: { DENORT_BIN: "/bin/true" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(r.code, 2, bad);
    ok(new TextDecoder().decode(r.stderr).startsWith("error[compile.bad_net_host]: "), bad);
  }
});

Deno.test("both binaries carry the runtime V8 flags the benchmarks measured", async () => {
  const { dir } = await sharedBuild();
  for (const name of ["bernstein", "bernstein-verify"]) {
    const meta = readCompileMetadata(await Deno.readFile(join(dir, LINUX, name)));
    const flags = meta.v8_flags as string[];
    for (const flag of RUNTIME_V8_FLAGS) ok(flags.includes(flag), `${name}: ${flag}`);
  }
});

Deno.test("each binary embeds the modules it loads lazily: the CLI, the gate, deflate and sidecar workers, the storage drivers", async () => {
  const { dir } = await sharedBuild();
  const embeds = async (name: string, text: string) => {
    const bytes = await Deno.readFile(join(dir, LINUX, name));
    const needle = new TextEncoder().encode(text);
    for (let at = bytes.indexOf(needle[0]); at >= 0; at = bytes.indexOf(needle[0], at + 1)) {
      if (needle.every((b, i) => bytes[at + i] === b)) return true;
    }
    return false;
  };
  // A string only src/cli/demo.ts holds (main.ts imports the CLI by a computed specifier),
  // and one only each worker holds (started by URL): the gate's, and the pack builder's deflate
  // and sidecar workers.
  strictEqual(await embeds("bernstein", "demo complete:"), true);
  strictEqual(await embeds("bernstein", "gate worker used before init"), true);
  strictEqual(await embeds("bernstein", 'workerScope("deflate worker")'), true);
  strictEqual(await embeds("bernstein", 'workerScope("sidecar worker")'), true);
  // Each storage driver's own error text: src/storage imports them only when it connects.
  strictEqual(await embeds("bernstein", "The client is closed"), true);
  strictEqual(await embeds("bernstein", "You cannot execute queries during copy"), true);
  strictEqual(await embeds("bernstein-verify", "gate worker used before init"), true);
  strictEqual(
    await embeds("bernstein-verify", "demo complete:"),
    false,
    "the verifier stays small",
  );
});

Deno.test("release manifests name every archive with its checksum", () => {
  const info = {
    description: "d",
    homepage: "https://example.invalid/b",
    license: "Apache-2.0",
    download_base_url: "https://example.invalid/v{version}",
  };
  const digests = new Map(TARGETS.map((t, i) => [archiveName("1.2.3", t), String(i).repeat(64)]));
  const sums = sha256Sums(digests);
  strictEqual(sums.split("\n").length - 1, TARGETS.length);
  ok(sums.includes(`${"4".repeat(64)}  bernstein-1.2.3-x86_64-pc-windows-msvc.zip`));
  const formula = homebrewFormula(info, "1.2.3", digests);
  ok(
    formula.includes(
      'url "https://example.invalid/v1.2.3/bernstein-1.2.3-aarch64-apple-darwin.tar.gz"',
    ),
  );
  ok(formula.includes(`sha256 "${"3".repeat(64)}"`));
  const scoop = JSON.parse(scoopManifest(info, "1.2.3", digests));
  strictEqual(scoop.architecture["64bit"].hash, "4".repeat(64));
  deepStrictEqual(scoop.bin, ["bernstein.exe", "bernstein-verify.exe"]);
  const partial = homebrewFormula(info, "1.2.3", new Map());
  ok(partial.includes("not built in this release"));
});

Deno.test("bernstein carries the dashboard's and the report's files (text imports, no --include)", async () => {
  const { dir } = await sharedBuild();
  const binary = new TextDecoder("latin1").decode(
    await Deno.readFile(join(dir, LINUX, "bernstein")),
  );
  for (const asset of ["base.css", "dashboard.css", "dashboard.js", "report.js"]) {
    // Both sides read byte for byte (latin1), so this compares the files' exact bytes.
    const bytes = await Deno.readFile(join(REPO_ROOT, "src", "report", "assets", asset));
    ok(binary.includes(new TextDecoder("latin1").decode(bytes)), `${asset} is not in the binary`);
  }
});
