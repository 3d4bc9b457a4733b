"""What counts as a number a person typed, for the prose check and for
the words a template passes into a chart (a title, a note, a legend).

A number is digits not inside a name (sm_90, v9, float4, H200). Letters
after them do not make a name ("37x", "1234us" and "4800GB/s" are numbers
with units; so is the exponent in "2^999"), and a lone x before digits is
a factor ("x37", and so "x86" too). Number words are numbers as well:
"three", "twice", "half", "a third", "twenty-four".

Text is read as a reader sees it (`as_read`): character references decoded
until none is left ("&amp;#50;" is a "2" on a page rendered twice),
compatibility forms folded (superscript and full-width digits), and every
character that shows as nothing dropped ("2&shy;.&shy;4" reads 2.4).
"""

from __future__ import annotations

import html
import re
import unicodedata

# A number as typed: hexadecimal or binary, digits with thousands
# separators (commas, or spaces as some styles group), a decimal part, an
# exponent; an SI letter right after it ("4M", "1k") multiplies it.
NUMBER_RE = re.compile(r"(?:(?<![A-Za-z0-9_])|(?<=(?<![A-Za-z0-9_])[xX]))(0[xX][0-9a-fA-F]+|0[bB][01]+|"
                       r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,])|"
                       r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][+-]?\d+)?(?:[kKMGT](?![A-Za-z]))?)")
_SI = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def number_value(text: str) -> float:
    t = text.replace(",", "").replace(" ", "").replace("\u00a0", "").replace("\u202f", "")
    if t[:2] in ("0x", "0X", "0b", "0B"):
        return float(int(t, 0))
    scale = _SI.get(t[-1], 1.0)
    return float(t[:-1] if scale != 1.0 else t) * scale
DAY_RE = re.compile(r"\b[Dd]ays? (\d+)(?:(?:,| and| or| to) (\d+))*")
WORD_RE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]+(?:-[A-Za-z]+)*(?![A-Za-z0-9_])")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
# Each number word and the values it may stand for ("half" is a half, or
# a factor of two; "a third" a third, or the ordinal three). Ordinals from
# third on: "first" and "second" are mostly not numbers ("per second").
NUMBER_WORDS: dict[str, tuple[float, ...]] = {
    **{w: (float(i),) for i, w in enumerate(_UNITS)},
    **{w: (float(v),) for w, v in _TENS.items()},
    "hundred": (100.0,), "hundreds": (100.0,), "thousand": (1e3,), "thousands": (1e3,),
    "million": (1e6,), "millions": (1e6,), "billion": (1e9,), "billions": (1e9,), "dozen": (12.0,),
    "dozens": (12.0,),
    "twice": (2.0,), "thrice": (3.0,), "double": (2.0,), "doubled": (2.0,), "doubles": (2.0,),
    "triple": (3.0,), "tripled": (3.0,), "quadruple": (4.0,), "quadrupled": (4.0,),
    "half": (0.5, 2.0), "halves": (0.5, 2.0), "halved": (0.5, 2.0), "halve": (0.5, 2.0),
    "third": (1 / 3, 3.0), "thirds": (1 / 3, 3.0), "quarter": (0.25, 4.0), "quarters": (0.25, 4.0),
    "fourth": (0.25, 4.0), "fifth": (0.2, 5.0), "sixth": (1 / 6, 6.0), "seventh": (1 / 7, 7.0),
    "eighth": (0.125, 8.0), "ninth": (1 / 9, 9.0), "tenth": (0.1, 10.0), "tenfold": (10.0,),
    "score": (20.0,), "scores": (20.0,), "fourscore": (80.0,), "gross": (144.0,), "myriad": (1e4,),
    "trillion": (1e12,), "trillions": (1e12,), "quintuple": (5.0,), "sextuple": (6.0,), "septuple": (7.0,),
    "octuple": (8.0,), "trio": (3.0,), "quartet": (4.0,), "quintet": (5.0,), "sextet": (6.0,),
    "septet": (7.0,), "octet": (8.0,),
}

# What shows as nothing: Unicode's format characters (soft hyphen,
# zero-width space and joiners, word joiner, byte-order mark, the tag
# characters) and the other default-ignorable code points (combining
# grapheme joiner, variation selectors, Hangul fillers).
_IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0"
                        "\U000e0100-\U000e01ef]")


def folded(text: str) -> str:
    """Non-ASCII numerals marked, compatibility forms folded, and what shows
    as nothing dropped."""
    text = _IGNORABLE.sub("", unicodedata.normalize("NFKC", numerals_marked(text)))
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def unescaped(text: str) -> str:
    """Character references decoded until none is left (each round shortens the text)."""
    for _ in range(4):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return text


# What a non-ASCII numeral (a superscript, a Roman numeral, an Ethiopic
# or Arabic-Indic digit, a vulgar fraction) reads as: a number no page
# states as a constant, so the check names it.
NUMERAL = " 999999999 "  # spaced: "x⁷" is no name

# Letters that read as digits beside digits: Cyrillic and Greek look-alikes
# of 3 and 0, and the Latin O, o, l and I inside a run of digits ("4,1OO").
_LOOKALIKE = str.maketrans({"\u0417": "3", "\u0437": "3", "\u041e": "0", "\u043e": "0", "\u039f": "0", "\u03bf": "0"})
_LATIN_IN_DIGITS = re.compile(r"(?<=[0-9,.])[OoIl]+|[OoIl]+(?=[0-9])(?<![A-Za-z][OoIl])")


def numerals_marked(text: str) -> str:
    """Every non-ASCII numeral as NUMERAL; look-alike letters beside digits
    as the digits they look like."""
    text = text.translate(_LOOKALIKE)
    text = _LATIN_IN_DIGITS.sub(lambda m: m.group(0).translate(str.maketrans("OoIl", "0011")), text)
    return "".join(NUMERAL if ord(c) > 127 and unicodedata.category(c) in ("Nd", "Nl", "No") else c for c in text)


def as_read(text: str) -> str:
    return re.sub(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])", " ", folded(unescaped(text)))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def typed(line: str, allowed: set[float], days: set[int]) -> list[str]:
    """The numbers and number words in `line` (already read as a reader
    sees it) that are neither stated constants nor a day of the course
    named as one ("day 24", "days 58 and 77": only the digits inside that
    phrase)."""
    day_spans = []
    for m in DAY_RE.finditer(line):
        day_spans += [(d.start() + m.start(), d.end() + m.start()) for d in re.finditer(r"\d+", m.group(0))]
    out = []
    for m in NUMBER_RE.finditer(line):
        value = number_value(m.group(1))
        if any(_close(value, a) for a in allowed):
            continue
        if value.is_integer() and int(value) in days and (m.start(1), m.end(1)) in day_spans:
            continue
        out.append(m.group(1))
    for m in WORD_RE.finditer(line):
        if not all(any(_close(v, a) for v in vs for a in allowed) for vs in word_parts(m.group(0))):
            out.append(m.group(0))
    for m in ROMAN_MEASURE_RE.finditer(line):
        if not any(_close(float(roman_value(m.group(1))), a) for a in allowed):
            out.append(m.group(1))
    return out


# A Roman numeral in capitals before a unit or "times" ("XXXVII times",
# "IV us"): a measurement typed in another notation. Only before a unit: a
# bare "II" is a part or a version's name.
ROMAN_MEASURE_RE = re.compile(
    r"(?<![A-Za-z0-9_])(M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3}))"
    r"(?<=[MDCLXVI])\s*(?:x\b|×|%|times\b|-?fold\b|[munµ]s\b|[KMGT]i?B/s\b|GB\b|per\s*cent\b)")


def roman_value(text: str) -> int:
    values = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
    total = 0
    for i, c in enumerate(text):
        v = values[c]
        total += -v if i + 1 < len(text) and values[text[i + 1]] > v else v
    return total


def word_parts(word: str) -> list[tuple[float, ...]]:
    """The numbers a word states, one entry per number it holds, each the
    values that number may stand for: "twenty-four" one (24), "one-hundred-
    fold" two (one, a hundred), "two-pass" one, "wave" none. Every one
    must be allowed."""
    parts = word.lower().split("-")
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS[1:10]:
        return [(float(_TENS[parts[0]] + _UNITS.index(parts[1])),)]
    found = [NUMBER_WORDS.get(p, ()) or _derived(p) for p in parts]
    return [v for v in found if v]


_ORDINAL_STEMS = {"twelf": "twelve", "fif": "five", "eigh": "eight", "nin": "nine", "twentie": "twenty",
                  "thirtie": "thirty", "fortie": "forty", "fiftie": "fifty", "sixtie": "sixty",
                  "seventie": "seventy", "eightie": "eighty", "ninetie": "ninety"}


def _derived(word: str) -> tuple[float, ...]:
    """A number word with a suffix: 'sevenfold', 'hundredfold', 'a
    twelfth', 'hundredths', 'twentieth'."""
    if word.endswith("fold") and word[:-4] in NUMBER_WORDS:
        return NUMBER_WORDS[word[:-4]]
    for suffix in ("ths", "th"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            stem = _ORDINAL_STEMS.get(stem, stem)
            if stem in NUMBER_WORDS:
                value = NUMBER_WORDS[stem][0]
                return (1 / value, value) if value else (value,)
    return ()
