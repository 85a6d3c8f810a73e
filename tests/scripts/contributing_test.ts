import { ok, strictEqual } from "node:assert/strict";
import {
  firstParagraph,
  folderHeaders,
  withFolderTable,
  withoutTablePadding,
} from "../../scripts/gen_contributing.ts";
import { REPO_ROOT } from "../_helpers/cli.ts";

Deno.test("CONTRIBUTING's 'where does X live' table matches the folders' mod.ts comments (run `deno task docs`)", async () => {
  const text = await Deno.readTextFile(`${REPO_ROOT}CONTRIBUTING.md`);
  const headers = await folderHeaders(new URL(`file://${REPO_ROOT}src/`));
  strictEqual(
    withoutTablePadding(text),
    withoutTablePadding(withFolderTable(text, headers)),
    "CONTRIBUTING.md is stale: run `deno task docs`",
  );
  for (const folder of ["src/io/", "src/errors/", "src/meta/", "src/lineage/store/"]) {
    ok(withoutTablePadding(text).includes(`| \`${folder}\` |`), `${folder} has a row`);
  }
});

Deno.test("every folder with a mod.ts says what it is for in its first paragraph", async () => {
  const headers = await folderHeaders(new URL(`file://${REPO_ROOT}src/`));
  const empty = headers.filter((h) => h.summary.split(" ").length < 5).map((h) => h.folder);
  strictEqual(empty.join(", "), "");
});

Deno.test("firstParagraph stops at the first blank line or tag and ignores code before the comment", () => {
  strictEqual(firstParagraph("/**\n * One two\n * three.\n *\n * More.\n */"), "One two three.");
  strictEqual(firstParagraph("/**\n * A b c.\n * @module\n */"), "A b c.");
  strictEqual(firstParagraph("import x;\n/** A. */"), "");
});
