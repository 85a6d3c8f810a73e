// Live pre-tool hook tests of the pinned claude CLI (see _policy_hook.ts).
import { PINNED_CLIS } from "../../../scripts/install_agent_clis.ts";
import { definePolicyHookTests } from "./_policy_hook.ts";

definePolicyHookTests(PINNED_CLIS.find((p) => p.name === "claude") ?? PINNED_CLIS[0]);
