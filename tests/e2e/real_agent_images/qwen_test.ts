// Attachments through real qwen's own channel (see _images.ts); one file per CLI.
import { REAL_CLIS } from "../_real_run.ts";
import { defineImageTests } from "./_images.ts";

defineImageTests(REAL_CLIS.find((c) => c.name === "qwen") ?? REAL_CLIS[0]);
