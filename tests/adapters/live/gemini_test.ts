// Live tests of the pinned gemini CLI (see _live.ts); one file per CLI so they run in parallel.
import { PINNED_CLIS } from "../../../scripts/install_agent_clis.ts";
import { defineLiveTests } from "./_live.ts";

defineLiveTests(PINNED_CLIS.find((p) => p.name === "gemini") ?? PINNED_CLIS[0]);
