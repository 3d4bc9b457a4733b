"""How a page prints a number from a record: a format spec that fits the
number's kind, so that a helper's value cannot be shown as something it
is not (a time as a percentage, a count with invented decimals)."""

from __future__ import annotations

import re

from .marks import TemplateProblem

# A field's kind, by its name: times (stored in ms, shown in us), cycles,
# percentages already (…_pct), fractions (a spread, a share), bandwidths,
# ratios of two fields; any field whose value is a whole number is a count.
_TIME = re.compile(r"(?:^|_)(?:ms|us|ns|s)$|_ms:us$|^(?:median|mean|min|max|q1|q3)(?:_ms)?$")
_FRACTIONS = {"spread", "ratio", "share"}


def kind_of(field: str, value) -> str:
    base = field.split(":")[0]
    if _TIME.search(field) or _TIME.search(base):
        return "time"
    if base.endswith("_cycles"):
        return "cycles"
    if base.endswith("_pct"):
        return "percent"
    if base in _FRACTIONS or base.endswith("_fraction"):
        return "fraction"
    if isinstance(value, int) and not isinstance(value, bool):
        return "count"
    return "number"


def number(value, fmt: str, field: str = "") -> str:
    """`value` formatted by a spec such as '.1f', ',', '.3g' (or '{:.1f}'):
    only a format spec, no field names or attribute access; decimal
    notations only; '%' only for a fraction or a ratio (a spread, a share),
    never for a time, a count or a percentage already; a count (a whole
    number) printed whole, without decimals."""
    m = re.fullmatch(r"\{:([^{}]*)\}", fmt)
    spec = m.group(1) if m else fmt
    # Python's spec without fill or alignment (a fill is text typed into the
    # page through a format; "0<6" appends digits the value does not have),
    # decimal notations only (a hexadecimal, binary or character form prints
    # a number the record does not hold as one a reader reads).
    if not re.fullmatch(r"[+\- ]?0?\d{0,2}[,_]?(?:\.\d{1,2})?[deEfFgG%]?", spec):
        raise TemplateProblem(f"format '{fmt}' is not a decimal number format such as '.1f', ',' or '.1%' "
                              "(widths and precisions of at most two digits; no x, b, c, o or n)")
    kind = kind_of(field, value)
    shown = f"'{field}'" if field else "this value"
    if spec.endswith("%") and (kind in ("time", "cycles", "percent", "count")
                               or (isinstance(value, (int, float)) and abs(value) > 10)):
        raise TemplateProblem(f"format '{fmt}' prints {shown} ({kind}, {value!r}) as a percentage: '%' is for "
                              "fractions (a spread, a share, a ratio of two rows)")
    if kind == "count" and re.search(r"\.[1-9]|[eEgG%]$", spec):
        raise TemplateProblem(f"format '{fmt}' prints {shown}, a count ({value!r}), with decimals or an exponent; "
                              "a count prints whole: ',' or 'd'")
    try:
        return format(value, spec)
    except (TypeError, ValueError) as e:
        raise TemplateProblem(f"format '{fmt}' does not fit the value {value!r}: {e}") from None
