// `bernstein init`: create the .sdd/ layout and configuration templates.
import type { CommandContext, CommandSpec } from "./spec.ts";

async function init(ctx: CommandContext): Promise<number> {
  const { findProject, initWorkspace } = await import("../config/mod.ts");
  const { systemRandom } = await import("../io/mod.ts");
  const { ensureOperatorSigningKey, OPERATOR_KEY_FILE } = await import(
    "../compliance/project/mod.ts"
  );
  const project = await findProject(ctx.cwd);
  const report = await initWorkspace(project, systemRandom);
  // The operator signing key exists from the start, so its fingerprint can be handed to
  // auditors before the first compliance pack is built.
  const key = await ensureOperatorSigningKey(project.sdd, systemRandom);
  (key.created ? report.created : report.kept).push(`.sdd/${OPERATOR_KEY_FILE}`);
  // The install identity signs this install's connection documents (docs/FLEET.md).
  const fleet = await import("../fleet/mod.ts");
  const identity = await fleet.ensureInstallIdentity(project.sdd, systemRandom);
  (identity.created ? report.created : report.kept).push(`.sdd/${fleet.INSTALL_KEY_FILE}`);
  if (ctx.json) {
    ctx.out.json({
      root: project.root,
      created: report.created,
      kept: report.kept,
      operator_key_fingerprint: key.fingerprint,
      install_identity_fingerprint: identity.fingerprint,
    });
    return 0;
  }
  ctx.out.line(`initialised ${project.root}`);
  for (const p of report.created) ctx.out.line(`  created ${p}`);
  if (report.kept.length > 0) {
    ctx.out.line(`  kept ${report.kept.length} existing path(s) unchanged`);
  }
  ctx.out.line(`operator key fingerprint (SHA-256): ${key.fingerprint}`);
  ctx.out.line(`install identity fingerprint (SHA-256): ${identity.fingerprint}`);
  if (project.gitDir === undefined) {
    ctx.out.warn({
      code: "init.not_git",
      message: `${project.root} is not a git repository; 'bernstein run' needs one`,
    });
  }
  return 0;
}

/** `bernstein init`. */
export const INIT_COMMANDS: CommandSpec[] = [
  {
    path: ["init"],
    summary: "Create .sdd/ (state layout, config.yaml) and a commented bernstein.yaml.",
    description:
      "Idempotent: existing files are never overwritten. Disposable state (.sdd/runtime/,\n" +
      ".sdd/worktrees/) and private keys (.sdd/keys/) are ignored via .sdd/.gitignore.\n" +
      "Creates the operator signing key (.sdd/keys/operator.key, Ed25519, 0600) that signs\n" +
      "compliance packs and prints its fingerprint for auditors, and the install identity\n" +
      "(.sdd/keys/install.key) that signs connection documents.\n" +
      "JSON: {root, created: [path], kept: [path], operator_key_fingerprint,\n" +
      "install_identity_fingerprint}.",
    json: true,
    run: init,
  },
];
