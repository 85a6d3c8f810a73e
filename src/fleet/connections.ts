// Connection documents (docs/FLEET.md): a named, versioned record of where a secret comes from
// (an environment variable NAME or a file the operator controls — never the secret), its scope
// and connector defaults, signed with the install identity. The chain records every create,
// rotation, resolution and refusal; resolution verifies the signature against this install,
// the document against the chain, and only then reads the secret.
import { join } from "node:path";
import { type AuditKey, AuditLog, type AuditSink } from "../audit/mod.ts";
import {
  canonicalBytes,
  type FieldChecks,
  fieldProblem,
  hasFields,
  isJsonObject,
  isSafeInteger,
  isString,
  isStringRecord,
  type JsonValue,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import {
  hkdfSha256,
  hmacSha256,
  parseDetachedJws,
  sha256,
  signDetachedJws,
  verifyDetachedJws,
} from "../crypto/mod.ts";
import {
  type EnvReader,
  type Random,
  readFileIfExists,
  sddFolder,
  withFileLock,
  writeFileAtomic,
} from "../io/mod.ts";
import { readFleetChain } from "./chain.ts";
import { FleetError } from "./errors.ts";
import { CONN_CREATE, CONN_REFUSE, CONN_RESOLVE, CONN_ROTATE } from "./events.ts";
import { type InstallIdentity, readInstallIdentity } from "./identity.ts";
import { checkFleetName } from "./names.ts";
import { type FleetPaths, fleetPaths } from "./paths.ts";
import { type ConnectionHistory, projectFleet } from "./projection.ts";

/** The document's schema tag. */
export const CONNECTION_SCHEMA = "bernstein-fleet-connection/v1";

/** Where the secret comes from. */
export type SecretRef = { kind: "env"; name: string } | { kind: "file"; path: string };

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Reads `--secret`: `env:NAME` (or a bare upper-case NAME) or `file:/absolute/path` outside
 * the project. Anything else — in particular a secret pasted in — is `fleet.bad_secret_ref`.
 */
export function parseSecretRef(text: string, projectRoot: string): SecretRef {
  const refuse = (why: string) =>
    new FleetError("fleet.bad_secret_ref", `--secret ${why}`, {
      hint: "--secret takes a reference: env:NAME or file:/absolute/path — never the secret itself",
    });
  const env = text.startsWith("env:") ? text.slice(4) : text;
  if (ENV_NAME.test(env)) return { kind: "env", name: env };
  if (text.startsWith("file:")) {
    const path = text.slice(5);
    if (!path.startsWith("/") || path.split("/").includes("..")) {
      throw refuse(`file path '${path}' must be absolute, without '..'`);
    }
    if (path === projectRoot || path.startsWith(projectRoot.replace(/\/$/, "") + "/")) {
      throw refuse(`file ${path} is inside the project, where agents can write`);
    }
    return { kind: "file", path };
  }
  throw refuse("is not env:NAME (upper-case letters, digits, _) or file:/absolute/path");
}

/** The reference as text (`env:NAME`, `file:/path`). */
export function secretRefText(ref: SecretRef): string {
  return ref.kind === "env" ? `env:${ref.name}` : `file:${ref.path}`;
}

/** The signed body of a connection document. */
export interface ConnectionDocument {
  /** Name. */
  name: string;
  /** Schema tag. */
  schema: string;
  /** 1, then one more per rotation. */
  version: number;
  /** Where the secret comes from. */
  secret_ref: SecretRef;
  /** What the credential may do (free text the connector reads, e.g. `repo:read`). */
  scope: string;
  /** Connector defaults (`--set key=value`). */
  defaults: { [key: string]: string };
}

const DOCUMENT_FIELDS: FieldChecks<ConnectionDocument> = {
  name: isString,
  schema: isString,
  version: isSafeInteger,
  secret_ref: (v) =>
    isJsonObject(v) &&
    ((v.kind === "env" && isString(v.name)) || (v.kind === "file" && isString(v.path))),
  scope: isString,
  defaults: isStringRecord,
};

/** A connection file: the document and its detached signature. */
interface SignedDocument {
  document: ConnectionDocument;
  kid: string;
  signature: string;
}

const SIGNED_FIELDS: FieldChecks<SignedDocument> = {
  document: (v) => v !== undefined && hasFields(v, DOCUMENT_FIELDS),
  kid: isString,
  signature: isString,
};

/** `sha256:` of the document's `canon` bytes. */
export function documentHash(doc: ConnectionDocument): string {
  return `sha256:${toHex(sha256(canonicalBytes(doc, "canon")))}`;
}

/** An install-keyed digest of a secret reference (the chain never holds the reference). */
export function secretRefDigest(auditKey: AuditKey, ref: SecretRef): string {
  const key = hkdfSha256(auditKey.bytes, { info: "fleet-secret-ref", length: 32 });
  return toHex(hmacSha256(key, new TextEncoder().encode(secretRefText(ref))));
}

/** Parses `--set key=value` connector defaults. */
export function connectionDefaults(pairs: readonly string[]): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const key = pair.slice(0, eq);
    if (eq <= 0 || !/^[a-z0-9][a-z0-9_.-]*$/.test(key)) {
      throw new FleetError("fleet.bad_setting", `--set '${pair}' is not key=value`, {
        hint: "--set owner=acme (keys: [a-z0-9][a-z0-9_.-]*)",
      });
    }
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

function checkScope(scope: string): string {
  if (!/^\S{1,200}$/.test(scope)) {
    throw new FleetError(
      "fleet.bad_setting",
      `--scope '${scope}' must be 1-200 non-space characters`,
    );
  }
  return scope;
}

/** What a successful resolution hands the caller. */
export interface MintedSecret {
  /** The secret's value (register it for redaction; never log it). */
  value: string;
  /** A per-resolution id, recorded on the chain. */
  token_id: string;
  /** The document version resolved. */
  version: number;
  /** Its hash. */
  document_hash: string;
}

/** A connection as `conn list` / `conn show` report it (no secret, a reference only). */
export interface ConnectionView {
  /** Name. */
  name: string;
  /** Latest version. */
  version: number;
  /** Its document hash. */
  document_hash: string;
  /** `env:NAME` or `file:/path`. */
  secret_ref: string;
  /** Scope. */
  scope: string;
  /** Connector defaults. */
  defaults: { [key: string]: string };
  /** The signing key id. */
  kid: string;
  /** True when the signature verifies against this install's identity. */
  signed_here: boolean;
}

/** A document file as read: the body, who signed it, and its hash (checked against the chain). */
interface LatestDocument {
  document: ConnectionDocument;
  kid: string;
  signature: string;
  hash: string;
}

/** The connection documents of one project. */
export class ConnectionStore {
  /** Fleet paths. */
  readonly paths: FleetPaths;
  readonly #sdd: string;
  readonly #key: AuditKey;
  readonly #random: Random;

  constructor(options: { sdd: string; auditKey: AuditKey; random: Random }) {
    this.#sdd = options.sdd;
    this.paths = fleetPaths(options.sdd);
    this.#key = options.auditKey;
    this.#random = options.random;
  }

  async #append(event: Parameters<AuditSink["append"]>[0], sink?: AuditSink): Promise<void> {
    if (sink !== undefined) {
      await sink.append(event);
      return;
    }
    const log = new AuditLog(sddFolder(this.#sdd, "audit"), this.#key);
    try {
      await log.append(event);
    } finally {
      await log.close();
    }
  }

  #file(name: string, version: number): string {
    return join(this.paths.connectionsDir, name, `${version}.json`);
  }

  async #history(name: string): Promise<ConnectionHistory | undefined> {
    const chain = await readFleetChain(sddFolder(this.#sdd, "audit"), this.#key);
    return projectFleet(chain.events).connections.get(name);
  }

  async #write(doc: ConnectionDocument, identity: InstallIdentity): Promise<void> {
    const body = canonicalBytes(doc, "canon");
    const signature = signDetachedJws(identity.seed, body, { kid: identity.kid });
    const file = canonicalBytes(
      { document: doc, kid: identity.kid, signature },
      "canon",
    );
    await Deno.mkdir(join(this.paths.connectionsDir, doc.name), { recursive: true, mode: 0o755 });
    await writeFileAtomic(this.#file(doc.name, doc.version), file, { mode: 0o644 });
  }

  /** Creates a connection (version 1); an existing name is `fleet.exists`. */
  async create(
    identity: InstallIdentity,
    input: { name: string; secret: SecretRef; scope: string; defaults: { [key: string]: string } },
    actor = "operator",
  ): Promise<ConnectionView> {
    checkFleetName(input.name, "connection");
    checkScope(input.scope);
    await Deno.mkdir(this.paths.connectionsDir, { recursive: true, mode: 0o755 });
    return await withFileLock(this.paths.lock, async () => {
      if (await this.#history(input.name) !== undefined) {
        throw new FleetError("fleet.exists", `connection '${input.name}' exists`, {
          hint: `'bernstein conn rotate ${input.name} --secret REF' points it at a new secret`,
        });
      }
      const doc: ConnectionDocument = {
        name: input.name,
        schema: CONNECTION_SCHEMA,
        version: 1,
        secret_ref: input.secret,
        scope: input.scope,
        defaults: input.defaults,
      };
      await this.#write(doc, identity);
      await this.#append({
        actor,
        event_type: CONN_CREATE,
        resource_type: "fleet_connection",
        resource_id: doc.name,
        details: {
          name: doc.name,
          document_hash: documentHash(doc),
          version: 1,
          secret_ref_digest: secretRefDigest(this.#key, doc.secret_ref),
          scope: doc.scope,
        },
      });
      return this.#view(doc, identity.kid, true);
    });
  }

  /** Rotates a connection to a new secret reference (version + 1); consumers need no edit. */
  async rotate(
    identity: InstallIdentity,
    name: string,
    change: { secret: SecretRef; scope?: string },
    actor = "operator",
  ): Promise<ConnectionView> {
    checkFleetName(name, "connection");
    return await withFileLock(this.paths.lock, async () => {
      const current = await this.#latest(name);
      const doc: ConnectionDocument = {
        ...current.document,
        version: current.document.version + 1,
        secret_ref: change.secret,
        scope: change.scope === undefined ? current.document.scope : checkScope(change.scope),
      };
      await this.#write(doc, identity);
      await this.#append({
        actor,
        event_type: CONN_ROTATE,
        resource_type: "fleet_connection",
        resource_id: name,
        details: {
          name,
          old_document_hash: documentHash(current.document),
          new_document_hash: documentHash(doc),
          version: doc.version,
          secret_ref_digest: secretRefDigest(this.#key, doc.secret_ref),
        },
      });
      return this.#view(doc, identity.kid, true);
    });
  }

  /** The latest version the chain recorded, read from its file and checked against the chain. */
  async #latest(name: string): Promise<LatestDocument> {
    const history = await this.#history(name);
    const head = history?.versions.at(-1);
    if (head === undefined) {
      throw new FleetError("fleet.unknown_name", `no connection '${name}'`, {
        hint: "'bernstein conn create NAME --secret env:VAR --scope SCOPE' creates one",
      });
    }
    const path = this.#file(name, head.version);
    const bytes = await readFileIfExists(path);
    if (bytes === undefined) {
      throw new FleetError(
        "fleet.document_tampered",
        `connection '${name}' v${head.version} is missing`,
        {
          location: path,
        },
      );
    }
    let value: JsonValue;
    try {
      value = parseJsonBytes(bytes);
    } catch (error) {
      throw new FleetError("fleet.document_tampered", `not JSON: ${(error as Error).message}`, {
        location: path,
      });
    }
    if (!hasFields(value, SIGNED_FIELDS)) {
      throw new FleetError(
        "fleet.document_tampered",
        `connection '${name}' v${head.version} is not a signed connection document: ${
          fieldProblem(value, SIGNED_FIELDS)
        }`,
        { location: path },
      );
    }
    const parsed = value;
    const hash = documentHash(parsed.document);
    if (hash !== head.document_hash) {
      throw new FleetError(
        "fleet.document_tampered",
        `connection '${name}' v${head.version} does not hash to what the chain recorded (${head.where})`,
        { location: path },
      );
    }
    return { ...parsed, hash };
  }

  #view(doc: ConnectionDocument, kid: string, signedHere: boolean): ConnectionView {
    return {
      name: doc.name,
      version: doc.version,
      document_hash: documentHash(doc),
      secret_ref: secretRefText(doc.secret_ref),
      scope: doc.scope,
      defaults: doc.defaults,
      kid,
      signed_here: signedHere,
    };
  }

  #verifies(doc: ConnectionDocument, kid: string, signature: string, identity?: InstallIdentity) {
    if (identity === undefined || kid !== identity.kid) return false;
    try {
      return verifyDetachedJws(parseDetachedJws(signature), {
        payload: canonicalBytes(doc, "canon"),
        publicKey: identity.publicKey,
      });
    } catch {
      return false;
    }
  }

  /** One connection (latest version). */
  async show(name: string): Promise<ConnectionView> {
    checkFleetName(name, "connection");
    const latest = await this.#latest(name);
    const identity = await readInstallIdentity(this.#sdd).catch(() => undefined);
    return this.#view(
      latest.document,
      latest.kid,
      this.#verifies(latest.document, latest.kid, latest.signature, identity),
    );
  }

  /** Every connection the chain knows. */
  async list(): Promise<ConnectionView[]> {
    const chain = await readFleetChain(sddFolder(this.#sdd, "audit"), this.#key);
    const names = [...projectFleet(chain.events).connections.keys()].sort();
    const out: ConnectionView[] = [];
    for (const name of names) out.push(await this.show(name));
    return out;
  }

  /** Every create, rotation, resolution and refusal of a connection, from the chain. */
  async audit(name: string): Promise<ConnectionHistory> {
    checkFleetName(name, "connection");
    const history = await this.#history(name);
    if (history === undefined) {
      throw new FleetError("fleet.unknown_name", `no connection '${name}' on the chain`);
    }
    return history;
  }

  /**
   * Resolves a connection for a task: the latest version, checked against the chain and this
   * install's identity, then the secret read from its reference. A refusal is recorded
   * (`fleet.conn_refuse`) before it is thrown; a success is `fleet.conn_resolve`.
   */
  async resolve(
    name: string,
    request: {
      taskId: string;
      runId: string;
      env: EnvReader;
      audit?: AuditSink;
      actor?: string;
      /** The agent session it is minted for (a run's claim). */
      session?: string;
      /** The variable it is given in. */
      variable?: string;
      /**
       * Called once the document verified and the secret was read, before the resolution is
       * recorded: pins the read (a run-spine entry) and returns the entry's hash.
       */
      pin?: (resolved: { document_hash: string; version: number }) => Promise<string>;
      /** Refuse (`fleet.secret_too_short`, audited) a secret shorter than this. */
      minLength?: number;
    },
  ): Promise<MintedSecret> {
    checkFleetName(name, "connection");
    const actor = request.actor ?? "orchestrator";
    const refuse = async (hash: string, code: FleetError["code"], reason: string) => {
      await this.#append({
        actor,
        event_type: CONN_REFUSE,
        resource_type: "fleet_connection",
        resource_id: name,
        details: { name, document_hash: hash, reason, task_id: request.taskId },
      }, request.audit);
      return new FleetError(code, `connection '${name}' refused: ${reason}`);
    };
    let latest: LatestDocument;
    try {
      latest = await this.#latest(name);
    } catch (error) {
      if (error instanceof FleetError && error.code === "fleet.document_tampered") {
        throw await refuse("", "fleet.document_tampered", error.message);
      }
      throw error;
    }
    const identity = await readInstallIdentity(this.#sdd).catch(() => undefined);
    if (!this.#verifies(latest.document, latest.kid, latest.signature, identity)) {
      throw await refuse(
        latest.hash,
        "fleet.document_foreign",
        `its signature (kid ${latest.kid}) does not verify against this install's identity` +
          (identity === undefined ? " (this install has none)" : ` (kid ${identity.kid})`) +
          "; a document copied from another install never resolves",
      );
    }
    const value = await this.#readSecret(latest.document.secret_ref, request.env);
    if (typeof value !== "string") {
      // The chain gets the reason without the reference (only its digest is ever recorded).
      const error = await refuse(latest.hash, "fleet.secret_unreadable", value.reason);
      throw new FleetError(error.code, `${error.message}: ${value.detail}`);
    }
    if (request.minLength !== undefined && value.length < request.minLength) {
      throw await refuse(
        latest.hash,
        "fleet.secret_too_short",
        `the secret is shorter than ${request.minLength} characters: it could not be kept out of the run's records`,
      );
    }
    const tokenId = toHex(this.#random.bytes(8));
    const spineEntry = await request.pin?.({
      document_hash: latest.hash,
      version: latest.document.version,
    });
    await this.#append({
      actor,
      event_type: CONN_RESOLVE,
      resource_type: "fleet_connection",
      resource_id: name,
      details: {
        name,
        document_hash: latest.hash,
        version: latest.document.version,
        task_id: request.taskId,
        run_id: request.runId,
        token_id: tokenId,
        ...(request.session === undefined ? {} : { session: request.session }),
        ...(request.variable === undefined ? {} : { variable: request.variable }),
        ...(spineEntry === undefined ? {} : { spine_entry_hash: spineEntry }),
      },
    }, request.audit);
    return {
      value,
      token_id: tokenId,
      version: latest.document.version,
      document_hash: latest.hash,
    };
  }

  async #readSecret(
    ref: SecretRef,
    env: EnvReader,
  ): Promise<string | { reason: string; detail: string }> {
    const fail = (reason: string, detail: string) => ({ reason, detail });
    if (ref.kind === "env") {
      const v = env.get(ref.name);
      return v === undefined || v === ""
        ? fail(
          "the secret reference (an environment variable) is not set",
          `${ref.name} is not set`,
        )
        : v;
    }
    try {
      const info = await Deno.lstat(ref.path);
      if (!info.isFile) {
        return fail(
          "the secret reference (a file) is not a regular file",
          `${ref.path} is not a regular file`,
        );
      }
      const text = new TextDecoder("utf-8", { fatal: true }).decode(await Deno.readFile(ref.path));
      const value = text.replace(/\r?\n$/, "");
      return value === ""
        ? fail("the secret reference (a file) is empty", `${ref.path} is empty`)
        : value;
    } catch (error) {
      return fail(
        "the secret reference (a file) cannot be read",
        `${ref.path}: ${(error as Error).name}`,
      );
    }
  }
}
