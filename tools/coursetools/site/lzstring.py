"""LZ-string's compressToBase64 and decompressFromBase64 (pieroxy's
lz-string 1.4, the library Compiler Explorer decodes its links with),
written again here so the tools need no package for it. JavaScript strings
are UTF-16 code units, so the text is taken as those (a character outside
the BMP is two units, as in the browser)."""

from __future__ import annotations

KEY = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def _units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]


def _text(units: list[int]) -> str:
    return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")


class _Bits:
    """Bits written low-order first into 6-bit characters, as lz-string's
    context_data_val / context_data_position do."""

    def __init__(self):
        self.out: list[str] = []
        self.val = 0
        self.pos = 0

    def put(self, value: int, count: int) -> None:
        for _ in range(count):
            self.val = (self.val << 1) | (value & 1)
            value >>= 1
            if self.pos == 5:
                self.out.append(KEY[self.val])
                self.pos, self.val = 0, 0
            else:
                self.pos += 1

    def flush(self) -> str:
        while True:
            self.val <<= 1
            if self.pos == 5:
                self.out.append(KEY[self.val])
                break
            self.pos += 1
        return "".join(self.out)


def compress_to_base64(text: str) -> str:
    units = _units(text)
    dictionary: dict[tuple, int] = {}
    to_create: set[tuple] = set()
    w: tuple = ()
    enlarge_in, dict_size, num_bits = 2, 3, 2
    bits = _Bits()

    def emit_w():
        nonlocal enlarge_in, num_bits
        if w in to_create:
            if w[0] < 256:
                bits.put(0, num_bits)
                bits.put(w[0], 8)
            else:
                bits.put(1, num_bits)
                bits.put(w[0], 16)
            enlarge_in -= 1
            if enlarge_in == 0:
                enlarge_in, num_bits = 2 ** num_bits, num_bits + 1
            to_create.discard(w)
        else:
            bits.put(dictionary[w], num_bits)
        enlarge_in -= 1
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1

    for u in units:
        c = (u,)
        if c not in dictionary:
            dictionary[c] = dict_size
            dict_size += 1
            to_create.add(c)
        wc = w + c
        if wc in dictionary:
            w = wc
            continue
        emit_w()
        dictionary[wc] = dict_size
        dict_size += 1
        w = c
    if w:
        emit_w()
    bits.put(2, num_bits)  # the end of the stream
    out = bits.flush()
    return out + "=" * (-len(out) % 4)


def decompress_from_base64(data: str) -> str:
    values = [KEY.index(ch) for ch in data if ch != "="]
    state = {"i": 0, "val": values[0] if values else 0, "pos": 32}

    def read(count: int) -> int:
        result, power = 0, 1
        for _ in range(count):
            bit = state["val"] & state["pos"]
            state["pos"] >>= 1
            if state["pos"] == 0:
                state["pos"] = 32
                state["i"] += 1
                state["val"] = values[state["i"]] if state["i"] < len(values) else 0
            result |= power if bit else 0
            power <<= 1
        return result

    dictionary: list = [0, 1, 2]
    enlarge_in, dict_size, num_bits = 4, 4, 3
    first = read(2)
    if first == 2:
        return ""
    entry = [read(8 if first == 0 else 16)]
    dictionary.append(entry)
    w, result = entry, list(entry)
    while True:
        if state["i"] > len(values):
            return ""
        c = read(num_bits)
        if c in (0, 1):
            dictionary.append([read(8 if c == 0 else 16)])
            c = dict_size
            dict_size += 1
            enlarge_in -= 1
        elif c == 2:
            return _text(result)
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1
        if c < len(dictionary):
            entry = list(dictionary[c])
        elif c == dict_size:
            entry = w + [w[0]]
        else:
            raise ValueError("not an lz-string")
        result += entry
        dictionary.append(w + [entry[0]])
        dict_size += 1
        enlarge_in -= 1
        w = entry
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1
