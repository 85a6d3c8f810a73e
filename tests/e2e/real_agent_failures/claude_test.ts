// Failure handling of real claude runs (see _failures.ts); one file per CLI so they run in parallel.
import { REAL_CLIS } from "../_real_run.ts";
import { defineFailureTests } from "./_failures.ts";

defineFailureTests(REAL_CLIS.find((c) => c.name === "claude") ?? REAL_CLIS[0]);
