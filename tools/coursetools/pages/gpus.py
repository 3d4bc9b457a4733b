"""Common GPUs by compute capability, for the README's day table: which
cards run a day that needs compute capability X (every card at X or
above). From NVIDIA's list of CUDA GPUs and their compute capabilities
(developer.nvidia.com/cuda-gpus, checked 2026-12-01)."""

from __future__ import annotations

EXAMPLES = (((7, 0), "V100"), ((7, 5), "T4, RTX 20xx"), ((8, 0), "A100"), ((8, 6), "RTX 30xx, A10"),
            ((8, 9), "RTX 40xx, L4, L40S"), ((9, 0), "H100, H200"), ((10, 0), "B200"),
            ((12, 0), "RTX 50xx"))


def cards_for(min_cc: str) -> str:
    """The example cards that run a day needing `min_cc` ("8.6")."""
    major, _, minor = min_cc.partition(".")
    need = (int(major), int(minor or 0))
    return "; ".join(f"{names} ({cc[0]}.{cc[1]})" for cc, names in EXAMPLES if cc >= need)
