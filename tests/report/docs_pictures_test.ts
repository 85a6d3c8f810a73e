// The README shows the dashboard and the report; the pictures are checked in under docs/ and
// `deno task docs` (scripts/gen_screenshots.ts) takes them again.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/cli.ts";

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

Deno.test("docs: the README's dashboard and report pictures exist and are PNGs of 1280 px", async () => {
  const readme = await Deno.readTextFile(join(REPO_ROOT, "README.md"));
  for (const name of ["dashboard.png", "report.png"]) {
    assert.ok(readme.includes(`](docs/${name})`), `README does not show docs/${name}`);
    const bytes = await Deno.readFile(join(REPO_ROOT, "docs", name));
    assert.deepEqual([...bytes.subarray(0, 8)], PNG, `${name} is not a PNG`);
    const width = new DataView(bytes.buffer, bytes.byteOffset).getUint32(16);
    assert.equal(width, 1280, `${name} is ${width} px wide`);
  }
  const tasks = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).tasks;
  assert.match(tasks.docs, /scripts\/gen_screenshots\.ts/);
});
