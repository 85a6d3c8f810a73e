// Attachments through real claude's own channel (see _images.ts); one file per CLI.
import { REAL_CLIS } from "../_real_run.ts";
import { defineImageTests } from "./_images.ts";

defineImageTests(REAL_CLIS.find((c) => c.name === "claude") ?? REAL_CLIS[0]);
