"""Reviewers' signatures over promotions: OpenSSH's `ssh-keygen -Y`.

The same mechanism git uses for SSH-signed commits (OpenSSH 8.2 and
newer; PROTOCOL.sshsig in OpenSSH's sources, checked 2026-11-29). A
reviewer signs the canonical text of a promotion entry with their private
key, which never enters the repository; `verify` checks the signature
against evidence/allowed_signers, the committed list of reviewers' public
keys, with the namespace "course-evidence" so that no other signature
made with the same key (a git commit, say) can pass for a promotion.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import EvidenceError, UsageError

NAMESPACE = "course-evidence"


def canonical(entry: dict) -> bytes:
    """What is signed: the entry without its signature, keys sorted, no
    spaces, UTF-8."""
    body = {k: v for k, v in entry.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if not found:
        raise EvidenceError(
            "ssh-keygen not found: checking reviewers' signatures needs OpenSSH 8.2 or newer "
            "(Debian: apt-get install openssh-client)"
        )
    return found


def sign(entry: dict, key: Path) -> str:
    """The armored SSH signature of `entry`, made with the private key at
    `key` (or, for a .pub path, its private half held by ssh-agent)."""
    key = Path(key).expanduser()
    if not key.exists():
        raise UsageError(f"{key}: error: no such key file; expected your private SSH key (--key)")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "promotion.json"
        data.write_bytes(canonical(entry))
        proc = subprocess.run(
            [_ssh_keygen(), "-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE, str(data)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        sig = Path(str(data) + ".sig")
        if proc.returncode != 0 or not sig.exists():
            raise UsageError(f"{key}: error: ssh-keygen -Y sign failed: {proc.stderr.strip() or proc.returncode}")
        return sig.read_text()


def principal_of(signature: str, allowed: Path) -> str | None:
    """The principal in `allowed` whose key made `signature`, if any."""
    if not allowed.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "sig"
        sig.write_text(signature)
        proc = subprocess.run(
            [_ssh_keygen(), "-Y", "find-principals", "-s", str(sig), "-f", str(allowed)],
            capture_output=True, text=True,
        )
    if proc.returncode != 0:
        return None
    return proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else None


def verify(entry: dict, allowed: Path) -> str | None:
    """None when `entry`'s signature is valid for its principal in
    `allowed`; otherwise why not."""
    signature = entry.get("signature")
    principal = entry.get("principal")
    if not isinstance(signature, str) or not signature.strip():
        return "unsigned: the promotion carries no reviewer's signature"
    if not isinstance(principal, str) or not principal or any(c in principal for c in ",*?! \n"):
        return "the promotion names no valid reviewer principal"
    if not allowed.exists():
        return f"no {allowed.name}: no reviewer's key is known, so no signature can be checked"
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "sig"
        sig.write_text(signature)
        args = [_ssh_keygen(), "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE, "-s", str(sig)]
        when = entry.get("promoted_at", "")
        if isinstance(when, str) and len(when) >= 10:
            # A retired key (valid-before in allowed_signers) still
            # verifies what it signed while it was valid.
            args[3:3] = ["-O", "verify-time=" + when[:10].replace("-", "")]
        proc = subprocess.run(args, input=canonical(entry), capture_output=True)
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return f"the signature does not verify for {principal} ({why[-1] if why else 'ssh-keygen refused it'})"
    return None


def allowed_signers_path(evidence_dir: Path) -> Path:
    return Path(evidence_dir) / "allowed_signers"


def public_key_line(principal: str, pub: Path) -> str:
    """An allowed_signers line for a reviewer's public key file."""
    parts = Path(pub).read_text().split()
    if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-", "sk-")):
        raise UsageError(f"{pub}: error: not an OpenSSH public key; expected a .pub file")
    return f'{principal} namespaces="{NAMESPACE}" {parts[0]} {parts[1]}'


del os
