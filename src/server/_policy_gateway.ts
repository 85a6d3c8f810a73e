// What the task server needs of the run's tool-call policy (the run's `PolicyService`): a
// decision for an agent session's call, and the queue of parked asks the operator answers.
import type { Approval, HookRequest, PolicyDecision } from "../policy/mod.ts";

/** What the server needs of the run's policy (the run's `PolicyService`). */
export interface PolicyGateway {
  /** Decides on a call of an agent session (parks an ask until it is answered). */
  decide(session: string, request: HookRequest, signal?: AbortSignal): Promise<PolicyDecision>;
  /** The approval queue. */
  approvals: {
    /** Parked calls (pending only unless `all`). */
    list(all?: boolean): Approval[];
    /** Answers a pending call. */
    resolve(id: string, verdict: "approve" | "deny", actor: string, note?: string): Approval;
  };
}
