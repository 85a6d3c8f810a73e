/**
 * The content-addressed blob store (FORMATS.md §3): blobs under `.sdd/cas/<hex[0:2]>/<hex>`
 * with a `<hex>.meta.json` sidecar; first writer wins; reads refuse symlinks and re-hash.
 *
 * @example
 * ```ts
 * const cas = new CasStore(join(project.sdd, "cas"));
 * const put = await cas.putFile("shot.png", { contentType: "image/png", maxBytes: 20 << 20 });
 * const bytes = await cas.read(put.digest);
 * ```
 *
 * @module
 */
export { CasError } from "./errors.ts";
export {
  type CasMeta,
  type CasPutOptions,
  type CasPutResult,
  CasStore,
  type CasStoreOptions,
  checkCasKey,
} from "./store.ts";
