import { ok, strictEqual } from "node:assert/strict";
import { collectErrorCodes, renderErrorReference } from "../../scripts/gen_error_codes.ts";
import { isErrorCode } from "../../src/errors/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

const strip = (t: string) =>
  t.split("\n").map((l) =>
    l.startsWith("|") ? l.replace(/ {2,}/g, " ").replace(/-{3,}/g, "---") : l
  )
    .join("\n").trim();

Deno.test("docs/ERRORS.md lists every error code the source raises (run `deno task docs`)", async () => {
  const codes = await collectErrorCodes(new URL(`file://${REPO_ROOT}src/`));
  const text = await Deno.readTextFile(`${REPO_ROOT}docs/ERRORS.md`);
  strictEqual(
    strip(text),
    strip(renderErrorReference(codes)),
    "docs/ERRORS.md is stale: run `deno task docs`",
  );
  for (const code of ["config.unknown_key", "secret.symlink", "runs.bad_id", "task.claim_lost"]) {
    ok(codes.has(code), `${code} is found`);
  }
  for (const code of codes.keys()) ok(isErrorCode(code), `${code} has a known family`);
});
