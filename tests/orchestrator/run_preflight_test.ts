import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { lockRun } from "../../src/orchestrator/run_preflight.ts";
import { CAN_SHARE_DESCRIPTORS, shareDescriptor } from "../_helpers/shared_descriptor.ts";
import { git, withTempDir } from "../_helpers/temp.ts";

Deno.test({
  name: "the run lock is free once released, though a child being started shares its descriptor",
  ignore: !CAN_SHARE_DESCRIPTORS,
  fn: async () => {
    await withTempDir(async (dir) => {
      await git(dir, "init", "-q", "-b", "main");
      const first = await lockRun(dir);
      strictEqual(first?.path, join(dir, ".sdd", "run.lock"));
      const closeCopy = shareDescriptor(first.path);
      try {
        first.release();
        const second = await lockRun(dir);
        strictEqual(second?.path, first.path);
        second.release();
      } finally {
        closeCopy();
      }
    });
  },
});
