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

import base64
import binascii
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import EvidenceError, UsageError, display_path
from ..record.format import canonical

NAMESPACE = "course-evidence"


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if not found:
        raise EvidenceError("ssh-keygen not found: checking reviewers' signatures needs OpenSSH 8.2 or newer "
                            "(Debian: apt-get install openssh-client)")
    return found


def sign(entry: dict, key: Path) -> str:
    """The armored SSH signature of `entry`, made with the private key at
    `key` (or, for a .pub path, its private half held by ssh-agent)."""
    key = Path(key).expanduser()
    if not key.is_file():
        raise UsageError(f"{key}: error: not a key file; expected your private SSH key (--key)")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "promotion.json"
        data.write_bytes(canonical(entry, "signature"))
        proc = subprocess.run([_ssh_keygen(), "-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE, str(data)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        sig = Path(str(data) + ".sig")
        if proc.returncode != 0 or not sig.exists():
            raise UsageError(f"{key}: error: ssh-keygen -Y sign failed: {proc.stderr.strip() or proc.returncode}")
        return sig.read_text()


def principal_of(signature: str, allowed: Path) -> str | None:
    if not allowed.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "sig"
        sig.write_text(signature)
        proc = subprocess.run([_ssh_keygen(), "-Y", "find-principals", "-s", str(sig), "-f", str(allowed)],
                              capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return proc.stdout.strip().splitlines()[0]


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
    parse_allowed(allowed)
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "sig"
        sig.write_text(signature)
        args = [_ssh_keygen(), "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE, "-s", str(sig)]
        when = entry.get("promoted_at", "")
        if isinstance(when, str) and len(when) >= 10:
            # A retired key (valid-before in allowed_signers) still
            # verifies what it signed while it was valid.
            args[3:3] = ["-O", "verify-time=" + when[:10].replace("-", "")]
        proc = subprocess.run(args, input=canonical(entry, "signature"), capture_output=True)
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return f"the signature does not verify for {principal} ({why[-1] if why else 'ssh-keygen refused it'})"
    return None


def allowed_signers_path(evidence_dir: Path) -> Path:
    return Path(evidence_dir) / "allowed_signers"


# A principal is one plain address: OpenSSH reads commas as a list and
# '*' and '?' as patterns, either of which would let one line speak for
# another reviewer.
PRINCIPAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}@[A-Za-z0-9][A-Za-z0-9.-]{0,63}")
KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
             "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")
OPTION = re.compile(r'namespaces="course-evidence"|valid-(?:before|after)="\d{8}"')


def _key_problem(keytype: str, blob: str) -> str | None:
    if keytype not in KEY_TYPES:
        return f"key type '{keytype[:40]}' is not one of: {', '.join(KEY_TYPES)}"
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return "the key is not valid base64"
    n = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else -1
    if n < 0 or raw[4:4 + n].decode("ascii", "replace") != keytype:
        return f"the key's own type does not match '{keytype}'"
    return None


def parse_allowed(path: Path) -> str:
    """The file's text, once every line of it is checked (check_allowed)."""
    shown = display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise EvidenceError(f"{shown}: error: is not UTF-8 text; expected OpenSSH allowed_signers lines")
    check_allowed(text, shown)
    return text


def check_allowed(text: str, shown: str) -> None:
    """Every reviewer line of allowed_signers (`text`, the file `shown`):
    one plain principal, only the course's namespace and validity options,
    a known key type with a well-formed key, each key once, and one line
    per principal. EvidenceError (exit 4) names the line otherwise."""
    keys, seen = {}, {}
    # Lines split on '\n' only, and nothing but printable characters in
    # them: OpenSSH and this parser must agree on where a line starts and
    # whether it is a comment, or a line this parser skips could be a key
    # to ssh-keygen (a form feed before '#', a Unicode line separator).
    for i, line in enumerate(text.split("\n"), 1):
        def bad(why):
            return EvidenceError(f"{shown}:{i}: error: {why}; expected 'PRINCIPAL namespaces=\"{NAMESPACE}\" "
                                 "KEYTYPE KEY' (research/REVIEW-PROCESS.md)")
        if any(not c.isprintable() for c in line):
            raise bad("a control or separator character")
        if line == "" or line.startswith("#"):
            continue
        if line != line.strip() or "\u3000" in line or "\xa0" in line or not line.isascii():
            raise bad("a key line with leading or trailing space or a character outside ASCII")
        parts = line.split(" ")
        if len(parts) != 4:
            raise bad(f"{len(parts)} fields separated by single spaces")
        principal, options, keytype, blob = parts
        if not PRINCIPAL.fullmatch(principal):
            raise bad(f"principal '{principal[:60]}' is not one plain address (no lists, no patterns)")
        opts = options.split(",")
        if not all(OPTION.fullmatch(o) for o in opts) or f'namespaces="{NAMESPACE}"' not in opts \
                or len(set(o.split("=")[0] for o in opts)) != len(opts):
            raise bad(f"options '{options[:80]}' are not the course's namespace and at most valid-before/valid-after")
        problem = _key_problem(keytype, blob)
        if problem:
            raise bad(problem)
        if blob in keys:
            raise bad(f"this key is already on line {keys[blob]}")
        keys[blob] = i
        # One line per principal, ever: a second line under a reviewer's
        # name, even one marked retired, would let its key sign as them.
        # A reviewer's new key comes with a new principal.
        if principal in seen:
            raise bad(f"{principal} already has a key on line {seen[principal]}; a new key takes a new "
                      "principal (research/REVIEW-PROCESS.md)")
        seen[principal] = i


def check_name(name: str) -> str:
    name = name.strip()
    if len(name) > 100 or any(not c.isprintable() for c in name):
        raise UsageError("--name: expected the reviewer's name on one line, printable, at most 100 characters")
    return name


def public_key_line(principal: str, pub: Path) -> str:
    """An allowed_signers line for a reviewer's public key file."""
    if not PRINCIPAL.fullmatch(principal or ""):
        raise UsageError(f"--principal '{principal[:60]}': expected one plain address such as name@example.org "
                         "(no commas, spaces or patterns)")
    pub = Path(pub)
    if not pub.is_file():
        raise UsageError(f"{pub}: error: not a regular file; expected the reviewer's public key (.pub)")
    try:
        parts = pub.read_bytes()[:16384].decode("utf-8").split()
    except UnicodeDecodeError:
        parts = []
    if len(parts) < 2 or _key_problem(parts[0], parts[1]):
        raise UsageError(f"{pub}: error: not an OpenSSH public key; expected a .pub file")
    return f'{principal} namespaces="{NAMESPACE}" {parts[0]} {parts[1]}'

