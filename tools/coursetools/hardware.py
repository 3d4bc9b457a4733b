"""What a GPU's own report says it can do, read by the record's checks and
by the pages alike."""

from __future__ import annotations


def peak_dram_gbps(gpu: dict) -> float | None:
    """The device's theoretical DRAM bandwidth: two transfers per memory
    clock over the bus width (what cudaDeviceProp documents)."""
    khz, bits = gpu.get("memory_clock_khz"), gpu.get("memory_bus_bits")
    if not isinstance(khz, (int, float)) or not isinstance(bits, (int, float)) or khz <= 0 or bits <= 0:
        return None
    return 2.0 * khz * 1e3 * (bits / 8) / 1e9
