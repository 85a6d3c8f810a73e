// `deno task test` starts the files of tests/long_files.txt first (longest first, so the last
// files to start are short ones): the list must name test files that exist, each once, and the
// task must read it.
import { deepStrictEqual, ok } from "node:assert/strict";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("tests/long_files.txt names existing test files, each once, and the test task reads it", async () => {
  const listed = (await Deno.readTextFile(`${REPO_ROOT}tests/long_files.txt`)).split("\n")
    .filter((line) => line !== "");
  ok(listed.length > 0);
  deepStrictEqual(listed.filter((f, i) => listed.indexOf(f) !== i), [], "no file twice");
  for (const file of listed) {
    ok(/^tests\/[a-z0-9_/]+_test\.ts$/.test(file), `${file}: a test file under tests/`);
    ok((await Deno.stat(`${REPO_ROOT}${file}`)).isFile, `${file} exists`);
  }
  const config = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}deno.json`));
  ok(String(config.tasks.test).includes("$(cat tests/long_files.txt) tests/ src/"));
});
