"""A minimal reference verifier of bernstein lineage trees and compliance packs, for the benchmarks.

It does the per-entry work of `bernstein lineage gate` and `bernstein-verify pack` the plain way,
in Python 3 with OpenSSL through the `cryptography` package (Debian `python3-cryptography`), so
that the bench can print bernstein's figures beside those of a short script doing the same job
in the same invocation. Per entry of the log, in both modes: canonical bytes (json.loads then
json.dumps must give the line back), entry hash, every parent an earlier entry (or, in a pack, a
listed external parent), the entry's detached JWS (header with the entry's kid, Ed25519 over
`header_b64 "." line`) against the key of the entry's agent card.

    python3 verify.py tree DIR OPERATOR_SECRET   # .sdd/ of DIR: sidecars, cards; and the HMAC
    python3 verify.py pack PACK.zip [--operator-fingerprint HEX]

`pack` also checks the manifest (canonical bytes, output hash, the operator key's fingerprint
and the manifest's signature), every member's input hash, orphan signatures and entry_count.
It does less than bernstein (no size limits or zip-slip checks, no CSV or Article 12
cross-checks, no fork detection), so a ratio against it is conservative.

Prints one JSON object {"ok", "entries", "failures"}; exits 0 when every check passed.
"""

import base64
import hashlib
import hmac
import json
import sys
import zipfile
from pathlib import Path

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


def check_log(stream, cards, signature_of, known_parents, failures: list[str], hmac_key=None) -> int:
    """The per-entry checks over a log read line by line from a binary stream; returns its line count."""
    seen: set[str] = set()
    n = 0
    for raw_line in stream:
        n += 1
        if not raw_line.endswith(b"\n"):
            failures.append(f"line {n}: missing trailing newline")
        line = raw_line.rstrip(b"\n")
        entry = json.loads(line)
        if canon(entry) != line:
            failures.append(f"line {n}: non-canonical line bytes")
            continue
        eh = "sha256:" + sha256_hex(line)
        for p in entry["parent_hashes"]:
            if p not in seen and p not in known_parents:
                failures.append(f"line {n}: dangling parent_hash {p}")
        public = cards.get((entry["agent_id"], entry["agent_card_kid"]))
        sig = signature_of(entry, eh)
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
        if hmac_key is not None:
            body = dict(entry)
            body["operator_hmac"] = ""
            expected = hmac.new(hmac_key, canon(body), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, entry["operator_hmac"]):
                failures.append(f"line {n}: HMAC mismatch")
        seen.add(eh)
    return n


def card_key(data: bytes):
    card = json.loads(data)
    key = serialization.load_pem_public_key(card["public_key_pem"].encode("ascii"))
    return (card["agent_id"], card["kid"]), key


def verify_tree(root: Path, secret: bytes) -> dict:
    failures: list[str] = []
    sdd = root / ".sdd"
    cards = {}
    for card_file in [*sdd.glob("agents/*/card.json"), *sdd.glob("agents/*/*/card.json")]:
        ident, key = card_key(card_file.read_bytes())
        cards[ident] = key
    lineage = sdd / "lineage"

    def signature_of(entry, eh):
        h = sha256_hex(entry["artefact_path"].encode("utf-8"))
        try:
            return (lineage / "signatures" / h[:2] / h / (eh[7:] + ".jws")).read_bytes()
        except FileNotFoundError:
            return None

    with open(lineage / "log.jsonl", "rb") as log:
        n = check_log(log, cards, signature_of, set(), failures, secret)
    return {"ok": not failures, "entries": n, "failures": failures[:20]}


def verify_pack(path: str, fingerprint: str | None) -> dict:
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
    del manifest_bytes, body  # tens of MB for a large pack: not kept through the log

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
            ident, key = card_key(data)
            cards[ident] = key
    present = set(names)
    for name in listed:
        if name not in present:
            failures.append(f"{name}: missing member")
    del names, present, listed
    manifest["input_hashes"] = None

    # The log, line by line.
    external = set(manifest.get("external_parents", []))
    with zf.open("lineage-log.jsonl") as log:
        lines = check_log(log, cards, lambda _e, eh: signatures.pop(eh, None), external, failures)
    for eh in signatures:
        failures.append(f"signatures/{eh[7:]}.jws: orphan signature")
    if manifest["entry_count"] != lines:
        failures.append("pack-manifest.json: entry count mismatch")
    return {"ok": not failures, "entries": lines, "failures": failures[:20]}


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "tree":
        result = verify_tree(Path(argv[1]), argv[2].encode("utf-8"))
    elif len(argv) >= 2 and argv[0] == "pack":
        fingerprint = None
        if "--operator-fingerprint" in argv:
            fingerprint = argv[argv.index("--operator-fingerprint") + 1]
        result = verify_pack(argv[1], fingerprint)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
