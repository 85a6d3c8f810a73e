// One plan with a step per installed real CLI, run side by side (see _real_agents.ts).
import { defineMixedTest } from "./_real_agents.ts";

defineMixedTest();
