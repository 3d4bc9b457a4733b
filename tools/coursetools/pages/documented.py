"""Units that NVIDIA's documentation defines, which a page may state so a
reader can read a counter: "179,744 sectors" means little until the page
says how many bytes a sector is. Such a unit is a fact with a source, not
a measurement: no record gives it, it is shown as lesson.constant's values
are (on verified and unverified pages alike), and no claim may rest on it.

Each unit is here with the document that defines it; a unit a page needs
is added here, with its source, never typed into the page."""

from __future__ import annotations

from .marks import TemplateProblem, shown

# name: (value, where NVIDIA defines it).
UNITS = {
    "sector_bytes": (32, "Nsight Compute's Kernel Profiling Guide, its memory terminology: a sector is an "
                         "aligned 32-byte chunk of memory in a cache line or device memory; the memory "
                         "counters that name sectors (lts__t_sectors_*) count in it (checked 2026-12-02: \"Aligned 32 "
                         "byte-chunk of memory in a cache line or device memory\")"),
}


class PageDocumented:
    """The page API: units NVIDIA's documentation defines."""

    def documented(self, name: str, fmt: str = ",") -> str:
        """A unit NVIDIA's documentation defines, by name, printed with
        `fmt`: 'sector_bytes' is the bytes in one sector, the unit the
        memory counters that name sectors (lts__t_sectors_*) count. Each is
        listed with its source in pages/documented.py (UNITS). Shown on
        every page, verified or not: a fact a reader needs, not a
        measurement, so no claim may rest on it."""
        if name not in UNITS:
            raise TemplateProblem(f"no documented unit '{name}'; the units: {', '.join(sorted(UNITS))} "
                                  "(pages/documented.py, each with its source)")
        value, _source = UNITS[name]
        try:
            text = format(value, fmt)
        except (TypeError, ValueError):
            raise TemplateProblem(f"format '{fmt}' does not print the number {value}") from None
        return shown(text)
