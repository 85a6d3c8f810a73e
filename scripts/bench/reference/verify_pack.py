"""A minimal reference verifier of bernstein compliance packs, for the benchmarks only.

It does the per-entry work of `bernstein-verify pack` the plain way, in Python 3 with OpenSSL
through the `cryptography` package (Debian `python3-cryptography`), so that the bench can print
bernstein's figures beside those of a short script doing the same job in the same invocation:

- the manifest: canonical bytes, output hash, the operator key's fingerprint and the manifest's
  detached Ed25519 JWS;
- every member's input hash against the manifest (and no member left out);
- every line of the log: canonical bytes (json.loads then json.dumps must give the line back),
  entry hash, every parent either an earlier entry or a listed external parent, the entry's
  signature member (detached JWS header with the entry's kid, Ed25519 over
  `header_b64 "." line`) against the key of the entry's agent card;
- no signature member without an entry, entry_count equal to the lines.

It does less than bernstein-verify (no size limits or zip-slip checks, no CSV or Article 12
cross-checks, no fork detection), so the ratio against it is conservative. Usage:

    python3 verify_pack.py PACK.zip [--operator-fingerprint HEX]

Prints one JSON object {"ok", "entries", "failures"} and exits 0 when every check passed.
"""

import base64
import hashlib
import json
import sys
import zipfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

JWS_HEADER_KEYS = ["alg", "b64", "crit", "kid"]


def canon(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def b64url_decode(text: bytes) -> bytes:
    return base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_jws(raw: bytes, kid: str):
    """(header_b64, signature) of a detached JWS signed with `kid`, or None."""
    parts = raw.split(b".")
    if len(parts) != 3 or parts[1] != b"":
        return None
    header = json.loads(b64url_decode(parts[0]))
    if sorted(header) != JWS_HEADER_KEYS or header["alg"] != "EdDSA" or header["kid"] != kid:
        return None
    if header["b64"] is not False or header["crit"] != ["b64"]:
        return None
    return parts[0], b64url_decode(parts[2])


def verify_signature(public: Ed25519PublicKey, jws, payload: bytes) -> bool:
    try:
        public.verify(jws[1], jws[0] + b"." + payload)
        return True
    except InvalidSignature:
        return False


def verify(path: str, fingerprint: str | None) -> dict:
    failures: list[str] = []
    zf = zipfile.ZipFile(path)
    names = zf.namelist()
    manifest_bytes = zf.read("pack-manifest.json")
    manifest = json.loads(manifest_bytes)
    if canon(manifest) != manifest_bytes:
        failures.append("pack-manifest.json: non-canonical bytes")
    body = dict(manifest)
    output_hash = body.pop("output_hash")
    if output_hash != "sha256:" + sha256_hex(canon(body)):
        failures.append("pack-manifest.json: output hash mismatch")

    # The operator key, its fingerprint and the manifest signature.
    pem = zf.read("operator.pub")
    operator = serialization.load_pem_public_key(pem)
    der = operator.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    operator_fp = sha256_hex(der)
    if manifest["operator"]["public_key_sha256"] != operator_fp:
        failures.append("operator.pub: operator key mismatch")
    if fingerprint is not None and fingerprint != operator_fp:
        failures.append("operator.pub: not the pinned operator key")
    jws = parse_jws(zf.read("pack-manifest.json.sig"), manifest["operator"]["kid"])
    if jws is None or not verify_signature(operator, jws, manifest_bytes):
        failures.append("pack-manifest.json.sig: manifest signature invalid")

    # Input hashes of every other member; agent cards and signatures kept for the log.
    listed = manifest["input_hashes"]
    cards: dict[tuple[str, str], Ed25519PublicKey] = {}
    signatures: dict[str, bytes] = {}
    for name in names:
        if name in ("pack-manifest.json", "pack-manifest.json.sig"):
            continue
        data = zf.read(name)
        if listed.get(name) != "sha256:" + sha256_hex(data):
            failures.append(f"{name}: input hash mismatch")
        if name.startswith("signatures/"):
            signatures["sha256:" + name[len("signatures/"):-len(".jws")]] = data
        elif name.startswith("agent-cards/"):
            card = json.loads(data)
            key = serialization.load_pem_public_key(card["public_key_pem"].encode("ascii"))
            cards[(card["agent_id"], card["kid"])] = key
    for name in listed:
        if name not in names:
            failures.append(f"{name}: missing member")

    # The log, line by line.
    external = set(manifest.get("external_parents", []))
    seen: set[str] = set()
    raw = zf.read("lineage-log.jsonl")
    if raw and not raw.endswith(b"\n"):
        failures.append("lineage-log.jsonl: missing trailing newline")
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, line in enumerate(lines, start=1):
        entry = json.loads(line)
        if canon(entry) != line:
            failures.append(f"line {n}: non-canonical line bytes")
            continue
        eh = "sha256:" + sha256_hex(line)
        for p in entry["parent_hashes"]:
            if p not in seen and p not in external:
                failures.append(f"line {n}: dangling parent_hash {p}")
        public = cards.get((entry["agent_id"], entry["agent_card_kid"]))
        sig = signatures.pop(eh, None)
        if public is None:
            failures.append(f"line {n}: kid binding cannot be established")
        elif sig is None:
            failures.append(f"line {n}: no signature")
        else:
            parsed = parse_jws(sig, entry["agent_card_kid"])
            if parsed is None:
                failures.append(f"line {n}: kid binding mismatch")
            elif not verify_signature(public, parsed, line):
                failures.append(f"line {n}: invalid signature")
        seen.add(eh)
    for eh in signatures:
        failures.append(f"signatures/{eh[7:]}.jws: orphan signature")
    if manifest["entry_count"] != len(lines):
        failures.append("pack-manifest.json: entry count mismatch")
    return {"ok": not failures, "entries": len(lines), "failures": failures[:20]}


def main(argv: list[str]) -> int:
    fingerprint = None
    if "--operator-fingerprint" in argv:
        at = argv.index("--operator-fingerprint")
        fingerprint = argv[at + 1]
        del argv[at : at + 2]
    result = verify(argv[0], fingerprint)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
