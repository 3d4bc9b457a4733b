"""What a record must show to prove that a GPU ran its program: the run
was not waived, the driver answered, the program named the device it ran
on (its UUID, from the CUDA runtime), the driver reports that very device
(nvidia-smi, in the same recording), and the device's clocks were read
while the program ran. A script standing in for the binary on a machine
without a GPU has none of these.

`record` refuses a run that lacks any of them; `promote` and `verify`
check them again.
"""

from __future__ import annotations

import re

# The lessons' "waived" exit: no suitable GPU or driver here.
WAIVED_EXIT = 2
UUID_RE = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def gpu_proof_problems(rec: dict) -> list[str]:
    out = []
    if rec.get("exit_code") == WAIVED_EXIT:
        out.append(f"the run was waived (exit {WAIVED_EXIT}): this machine has no GPU or driver the lesson can use")
    gpu = rec.get("gpu") if isinstance(rec.get("gpu"), dict) else {}
    if not isinstance(gpu.get("driver"), str) or not gpu.get("driver"):
        out.append("no NVIDIA driver answered during the run (nvidia-smi reported none)")
    uuid = gpu.get("uuid")
    if not isinstance(uuid, str) or not UUID_RE.match(uuid):
        out.append("the program reported no device identity (a UUID from the CUDA runtime)")
    else:
        known = [g for g in gpu.get("smi_gpus") or [] if isinstance(g, dict)]
        match = [g for g in known if g.get("uuid") == uuid]
        if not match:
            out.append(f"the device the program ran on ({uuid}) is not one the driver reports "
                       f"({', '.join(str(g.get('uuid')) for g in known) or 'none'})")
        elif match[0].get("name") != gpu.get("name"):
            out.append(f"the driver names the device {match[0].get('name')!r}, the program {gpu.get('name')!r}")
    clocks = gpu.get("clocks") if isinstance(gpu.get("clocks"), dict) else {}
    if not isinstance(clocks.get("samples"), int) or clocks.get("samples", 0) < 1:
        out.append("no clock reading of that GPU was taken while the program ran")
    return out
