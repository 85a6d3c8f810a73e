// A two-step plan run by real claude (see _real_agents.ts); one file per CLI so they run in parallel.
import { REAL_CLIS } from "../_real_run.ts";
import { defineTwoStepTest } from "./_real_agents.ts";

defineTwoStepTest(REAL_CLIS.find((c) => c.name === "claude") ?? REAL_CLIS[0]);
