/**
 * The content-addressed blob store (FORMATS.md §3): blobs under `.sdd/cas/<hex[0:2]>/<hex>`
 * with a `<hex>.meta.json` sidecar; first writer wins; reads refuse symlinks and re-hash.
 *
 * @example
 * ```ts ignore
 * const cas = new CasStore(sddFolder(project.sdd, "cas"));
 * const put = await cas.putFile("shot.png", { contentType: "image/png", maxBytes: 20 << 20 });
 * const bytes = await cas.read(put.digest);
 * const report = await checkCasStore(cas); // every blob re-hashed, sidecars checked
 * ```
 *
 * @module
 */
export { badDigests, type CasCheckReport, checkCasStore } from "./check.ts";
export { CasError, isCasDamage } from "./errors.ts";
export { CasStore, checkCasKey } from "./store.ts";
