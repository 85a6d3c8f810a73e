// `bernstein dashboard`: a fresh one-time login link to the live dashboard of the run in
// progress, asked from its task server with the operator token in a header (the token itself
// never goes into a URL).
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag } from "./spec.ts";

async function dashboard(ctx: CommandContext): Promise<number> {
  const server = await import("../server/mod.ts");
  const { findProject } = await import("../config/mod.ts");
  const { systemClock } = await import("../io/mod.ts");
  const { BernsteinError } = await import("../errors/mod.ts");
  const project = await findProject(ctx.cwd);
  const notRunning = (why: string) =>
    new BernsteinError("dashboard.no_run", `no run is in progress in ${project.root} (${why})`, {
      hint: "the dashboard lives as long as its run; 'bernstein runs report --open' shows a " +
        "finished one",
    });
  let endpoint: { url: string; token: string };
  try {
    // Only the operator may open the dashboard: its token, from this project, never an agent's.
    const { url } = await server.discoverServerUrl({ env: ctx.env, cwd: project.root });
    const found = await server.readOperatorToken(project.root, ctx.env);
    if (found?.token === undefined) throw new Deno.errors.NotFound("no operator token");
    endpoint = { url, token: found.token };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw notRunning("no operator token");
    if (error instanceof BernsteinError && error.code === "server.not_found") {
      throw notRunning("no task server port file");
    }
    throw error;
  }
  const client = new server.TaskClient(endpoint, {
    attempts: 1,
    baseDelayMs: 0,
    clock: systemClock,
  });
  let url: string;
  try {
    const answer = await client.request("POST", server.DASHBOARD_LINKS_PATH) as { url?: unknown };
    if (typeof answer.url !== "string") throw new Error("the server sent no link");
    url = answer.url;
  } catch (error) {
    if (error instanceof server.ServerUnreachableError) throw notRunning(error.message);
    if (error instanceof server.ServerRefusalError && error.status === 404) {
      throw new BernsteinError(
        "dashboard.unavailable",
        `the task server at ${endpoint.url} serves no dashboard`,
      );
    }
    throw error;
  }
  if (ctx.json) ctx.out.json({ url });
  else {
    ctx.out.line(url);
    ctx.out.note("one-time link: it signs one browser in, then stops working");
  }
  if (booleanFlag(ctx, "open")) {
    const { openExternal } = await import("./opener.ts");
    const problem = await openExternal(url, ctx.env);
    if (problem !== undefined) {
      ctx.out.warn({
        code: "dashboard.open_failed",
        message: `could not open a browser (${problem}); open the link above yourself`,
      });
    }
  }
  return 0;
}

/** `bernstein dashboard`. */
export const DASHBOARD_COMMANDS: CommandSpec[] = [
  {
    path: ["dashboard"],
    summary: "Print (or --open) a one-time login link to the run's live dashboard.",
    description:
      "The task server of a run in progress serves a live dashboard at http://127.0.0.1:<port>/:\n" +
      "the run, its agents, the task graph, the merge queue, refused merges and log tails,\n" +
      "updated as it happens. This asks the server for a fresh one-time login link with the\n" +
      "operator token (kept beside the audit key, outside the project) in a header; the link signs one browser in and\n" +
      "then stops working. `bernstein run` prints one at start too.\n" +
      "JSON: {url}. Exit 1 when no run is in progress.",
    flags: [{ name: "open", type: "boolean", help: "Open the link in the default browser." }],
    json: true,
    examples: ["bernstein dashboard", "bernstein dashboard --open"],
    run: dashboard,
  },
];
