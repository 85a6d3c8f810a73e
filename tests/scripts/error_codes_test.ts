import { deepEqual, ok, strictEqual } from "node:assert/strict";
import { renderErrorReference, scanErrorCodes, tableCodes } from "../../scripts/gen_error_codes.ts";
import { isErrorCode } from "../../src/errors/mod.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

const strip = (t: string) =>
  t.split("\n").map((l) =>
    l.startsWith("|") ? l.replace(/ {2,}/g, " ").replace(/-{3,}/g, "---") : l
  )
    .join("\n").trim();

/** Codes no file spells out: config file checks reported under the plan and backlog families. */
const BUILT = new Set(
  ["plan", "backlog"].flatMap((f) =>
    ["not_utf8", "too_large", "yaml_syntax", "not_a_mapping"].map((n) => `${f}.${n}`)
  ),
);

Deno.test("docs/ERRORS.md lists every code of ERROR_CODES (run `deno task docs`)", async () => {
  const scan = await scanErrorCodes(new URL(`file://${REPO_ROOT}src/`));
  const text = await Deno.readTextFile(`${REPO_ROOT}docs/ERRORS.md`);
  strictEqual(
    strip(text),
    strip(renderErrorReference(scan.named)),
    "docs/ERRORS.md is stale: run `deno task docs`",
  );
  for (const code of ["config.unknown_key", "secret.symlink", "runs.bad_id", "task.claim_lost"]) {
    ok(scan.named.has(code), `${code} is found`);
  }
});

Deno.test("the source raises no code that ERROR_CODES lacks", async () => {
  const scan = await scanErrorCodes(new URL(`file://${REPO_ROOT}src/`));
  deepEqual(
    [...scan.unlisted].map(([code, files]) => `${code} in ${[...files].join(", ")}`),
    [],
    "add these to ERROR_CODES (src/errors/codes.ts)",
  );
});

Deno.test("every code of ERROR_CODES is raised somewhere (no stale entry)", async () => {
  const scan = await scanErrorCodes(new URL(`file://${REPO_ROOT}src/`));
  const stale = tableCodes().filter((code) => !scan.named.has(code) && !BUILT.has(code));
  deepEqual(stale, [], "remove these from ERROR_CODES or raise them");
  for (const code of tableCodes()) ok(isErrorCode(code), code);
});
