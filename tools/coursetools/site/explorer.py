"""An "Open in Compiler Explorer" link that carries the program itself.

Compiler Explorer reads its client state from the URL's fragment, which
the browser never sends to a server, so a long program fits (a path of a
few kilobytes is the most a server accepts). static/url.ts in
compiler-explorer/compiler-explorer (read 2026-12-01): deserialiseState()
first tries rison, then JSON.parse(decodeURIComponent(fragment)) for the
older "version 3" state, {"version": 3, "filterAsm": {}, "compilers":
[{"sourcez", "options", "compiler"}]}, whose `sourcez` convertOldState()
decompresses with lz-string's decompressFromBase64. That form is what this
link uses: the program compressed (site/lzstring.py), a link of about half
its size. decode() turns a link back into (source, options, compiler) for
the unit test.
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
    """The Compiler Explorer address that opens `source` with `options`
    (remembered by its text: serve asks again for every unchanged day on
    each save, and the compression is pure Python)."""
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
