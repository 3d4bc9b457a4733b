"""An "Open in Compiler Explorer" link that carries the program itself,
in the URL's fragment, which the browser never sends to a server (a path
of a few kilobytes is the most a server accepts). Compiler Explorer's
static/url.ts (read 2026-12-01): deserialiseState() tries rison, then
JSON.parse(decodeURIComponent(fragment)) for the older "version 3" state,
whose `sourcez` convertOldState() decompresses with lz-string's
decompressFromBase64: this link's form, the program compressed
(lzstring.py) to about half its size.
"""

from __future__ import annotations

import functools
import json
import urllib.parse

from . import lzstring

BASE = "https://godbolt.org/"
# NVCC 13.0 in Compiler Explorer's compiler list: ids are "nvcc" and the
# version's digits (etc/config/cuda.amazon.properties, read 2026-11-29).
COMPILER = "nvcc130"
# Characters a fragment may carry as they are (RFC 3986) and that neither
# Markdown nor HTML attributes treat specially; "+" is encoded, since the
# rison attempt reads it as a space.
SAFE = "{}[]:,-_.~!*/;?@$&="
# Some browsers and chat tools cut longer addresses.
MAX_LINK = 65536


@functools.lru_cache(maxsize=16)
def link(source: str, options: str, compiler: str = COMPILER) -> str:
    """The address that opens `source` with `options` (remembered: serve
    asks again for every unchanged day on each save, and lzstring is slow)."""
    state = {"version": 3, "filterAsm": {},
             "compilers": [{"sourcez": lzstring.compress_to_base64(source), "options": options, "compiler": compiler}]}
    text = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    return BASE + "#" + urllib.parse.quote(text, safe=SAFE)


def decode(url: str) -> tuple[str, str, str]:
    if not url.startswith(BASE + "#"):
        raise ValueError(f"not a Compiler Explorer link: {url[:60]}")
    state = json.loads(urllib.parse.unquote(url[len(BASE) + 1:]))
    c = state["compilers"][0]
    source = lzstring.decompress_from_base64(c["sourcez"]) if "sourcez" in c else c["source"]
    return source, c["options"], c["compiler"]
