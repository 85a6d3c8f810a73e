"""An independent, minimal Python reading of FORMATS.md section 4 (lineage v1).

It follows the byte rules literally, the way the Python Bernstein project does, so the tests
can show that trees written by either implementation verify with the other:

    python3 lineage_compat.py write  <dir> <operator-secret>   # write a small tree
    python3 lineage_compat.py verify <dir> <operator-secret>   # verify a tree, print JSON

Needs the `cryptography` package.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def canon(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def canon_ascii(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def entry_hash(line: bytes) -> str:
    return "sha256:" + hashlib.sha256(line).hexdigest()


def operator_hmac(entry: dict, secret: bytes) -> str:
    body = dict(entry)
    body["operator_hmac"] = ""
    return hmac.new(secret, canon(body), hashlib.sha256).hexdigest()


def artefact_dir(path: str) -> tuple[str, str]:
    h = hashlib.sha256(path.encode("utf-8")).hexdigest()
    return h[:2], h


def sign_detached(private_key, kid: str, payload: bytes) -> str:
    header = b64url(canon_ascii({"alg": "EdDSA", "b64": False, "crit": ["b64"], "kid": kid}))
    signature = private_key.sign(header.encode("ascii") + b"." + payload)
    return header + ".." + b64url(signature)


def write_python_layout(root: Path, secret: bytes) -> None:
    """A tree as the Python implementation writes one on POSIX: card folders named by the raw
    agent id (``agent:claude-worker-3/``, one of them per kid), and entries carrying its
    optional fields ``activity_source`` and ``model_ref`` (inner absent values as null)."""
    sdd = root / ".sdd"
    lineage = sdd / "lineage"
    lineage.mkdir(parents=True, exist_ok=True)
    agents = {}
    for i, agent_id in enumerate(["agent:claude-worker-3", "agent:codex-worker-1"]):
        key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"py-layout-{i}".encode()).digest())
        pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")
        kid = f"kid-{i}"
        folder = sdd / "agents" / agent_id
        if i == 1:
            folder = folder / kid
        folder.mkdir(parents=True, exist_ok=True)
        card = {"agent_id": agent_id, "kid": kid, "public_key_pem": pem, "protocol_version": "a2a/1.0"}
        (folder / "card.json").write_text(json.dumps(card, indent=2))
        agents[agent_id] = (key, kid)
    tips: dict[str, str] = {}
    lines = []
    writes = [
        ("src/app.py", "agent:claude-worker-3", b"a\n", "adapter", None),
        ("src/app.py", "agent:codex-worker-1", b"b\n", "scheduler", {
            "provider": "anthropic", "model_requested": "claude-x", "model_reported": None,
            "version": None, "routing_decision_hash": "",
        }),
        ("docs/notes.md", "agent:claude-worker-3", b"n\n", None, {
            "provider": "openai", "model_requested": "gpt-x", "model_reported": "gpt-x-2026",
            "version": "7", "routing_decision_hash": "sha256:" + "ab" * 32,
        }),
    ]
    for n, (path, agent_id, content, source, model_ref) in enumerate(writes):
        key, kid = agents[agent_id]
        entry = {
            "v": 1,
            "artefact_path": path,
            "artefact_kind": "file",
            "content_hash": "sha256:" + hashlib.sha256(content).hexdigest(),
            "parent_hashes": [tips[path]] if path in tips else [],
            "agent_id": agent_id,
            "agent_card_kid": kid,
            "tool_call_id": f"py-{n}",
            "span_id": f"{n:016x}",
            "ts_ns": 1_767_225_600_000_000_000 + n * 1_000_000_007,
            "operator_hmac": "",
        }
        if source is not None:
            entry["activity_source"] = source
        if model_ref is not None:
            entry["model_ref"] = model_ref
        entry["operator_hmac"] = operator_hmac(entry, secret)
        line = canon(entry)
        eh = entry_hash(line)
        shard, full = artefact_dir(path)
        sig_dir = lineage / "signatures" / shard / full
        sig_dir.mkdir(parents=True, exist_ok=True)
        (sig_dir / (eh.split(":", 1)[1] + ".jws")).write_text(sign_detached(key, kid, line))
        tips[path] = eh
        lines.append(line + b"\n")
    (lineage / "log.jsonl").write_bytes(b"".join(lines))


def write(root: Path, secret: bytes) -> None:
    sdd = root / ".sdd"
    lineage = sdd / "lineage"
    lineage.mkdir(parents=True, exist_ok=True)
    agents = {}
    for i, agent_id in enumerate(["py-agent", "agent:py/2"]):
        key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"seed-{i}".encode()).digest())
        pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")
        kid = f"py-kid-{i}"
        folder = sdd / "agents" / re.sub(r"[^A-Za-z0-9._-]", "_", agent_id) / kid
        folder.mkdir(parents=True, exist_ok=True)
        card = {"agent_id": agent_id, "kid": kid, "public_key_pem": pem, "protocol_version": "a2a/1.0"}
        (folder / "card.json").write_text(json.dumps(card, indent=2))
        agents[agent_id] = (key, kid)
    tips: dict[str, str] = {}
    lines = []
    writes = [
        ("src/main.py", "py-agent", b"print(1)\n"),
        ("src/main.py", "agent:py/2", b"print(2)\n"),
        ("docs/ünïcödé.md", "py-agent", "# é\n".encode()),
        ("pkg://pypi/bernstein/3.9.0", "agent:py/2", b"wheel"),
        ("src/main.py", "py-agent", b"print(3)\n"),
    ]
    for n, (path, agent_id, content) in enumerate(writes):
        key, kid = agents[agent_id]
        entry = {
            "v": 1,
            "artefact_path": path,
            "artefact_kind": "external" if "://" in path else "file",
            "content_hash": "sha256:" + hashlib.sha256(content).hexdigest(),
            "parent_hashes": [tips[path]] if path in tips else [],
            "agent_id": agent_id,
            "agent_card_kid": kid,
            "tool_call_id": f"py-{n}",
            "span_id": f"{n:016x}",
            "ts_ns": 1_767_225_600_000_000_000 + n * 1_000_000_007,
            "operator_hmac": "",
        }
        if n == 2:
            entry["trust_class"] = "third_party"
            entry["attachment_digests"] = [hashlib.sha256(b"img").hexdigest()]
        entry["operator_hmac"] = operator_hmac(entry, secret)
        line = canon(entry)
        eh = entry_hash(line)
        shard, full = artefact_dir(path)
        sig_dir = lineage / "signatures" / shard / full
        sig_dir.mkdir(parents=True, exist_ok=True)
        (sig_dir / (eh.split(":", 1)[1] + ".jws")).write_text(sign_detached(key, kid, line))
        tips[path] = eh
        lines.append(line + b"\n")
    fd = os.open(lineage / "log.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"".join(lines))


def verify(root: Path, secret: bytes) -> dict:
    sdd = root / ".sdd"
    cards = {}
    for card_file in [*sdd.glob("agents/*/card.json"), *sdd.glob("agents/*/*/card.json")]:
        data = json.loads(card_file.read_text())
        public = serialization.load_pem_public_key(data["public_key_pem"].encode("ascii"))
        cards[(data["agent_id"], data["kid"])] = public
    failures = []
    raw = (sdd / "lineage" / "log.jsonl").read_bytes()
    if raw and not raw.endswith(b"\n"):
        failures.append("missing trailing newline")
    parts = raw.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    seen = set()
    for n, line in enumerate(parts, start=1):
        entry = json.loads(line)
        if canon(entry) != line:
            failures.append(f"{n}: non-canonical line bytes")
            continue
        eh = entry_hash(line)
        public = cards.get((entry["agent_id"], entry["agent_card_kid"]))
        if public is None:
            failures.append(f"{n}: kid binding cannot be established")
        else:
            shard, full = artefact_dir(entry["artefact_path"])
            sidecar = sdd / "lineage" / "signatures" / shard / full / (eh[7:] + ".jws")
            if not sidecar.is_file():
                failures.append(f"{n}: invalid signature (no sidecar)")
                continue
            head, empty, sig = sidecar.read_text().split(".")
            header = json.loads(b64url_decode(head))
            if empty != "" or header != {"alg": "EdDSA", "b64": False, "crit": ["b64"], "kid": entry["agent_card_kid"]}:
                failures.append(f"{n}: kid binding mismatch")
            else:
                try:
                    public.verify(b64url_decode(sig), head.encode("ascii") + b"." + line)
                except InvalidSignature:
                    failures.append(f"{n}: invalid signature")
        if not hmac.compare_digest(operator_hmac(entry, secret), entry["operator_hmac"]):
            failures.append(f"{n}: HMAC mismatch")
        for p in entry["parent_hashes"]:
            if p not in seen:
                failures.append(f"{n}: dangling parent_hash")
        seen.add(eh)
    return {"ok": not failures, "entries": len(parts), "failures": failures}


if __name__ == "__main__":
    command, directory, operator_secret = sys.argv[1], Path(sys.argv[2]), sys.argv[3].encode()
    if command == "write":
        write(directory, operator_secret)
    elif command == "write-python-layout":
        write_python_layout(directory, operator_secret)
    else:
        print(json.dumps(verify(directory, operator_secret)))
