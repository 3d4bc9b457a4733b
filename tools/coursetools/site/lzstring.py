"""LZ-string's compressToBase64 and decompressFromBase64 (pieroxy's
lz-string 1.4, the library Compiler Explorer decodes its links with),
written again here so the tools need no package for it (PyPI's lzstring
counts a character outside the BMP as one unit, not two as JavaScript does,
and needs the Python 2 shim `future`). JavaScript strings are UTF-16 code
units, so the text is taken as those."""

from __future__ import annotations

KEY = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def compress_to_base64(text: str) -> str:
    data = text.encode("utf-16-le", "surrogatepass")
    dictionary: dict[tuple, int] = {}
    to_create: set[tuple] = set()
    w: tuple = ()
    enlarge_in, num_bits = 2, 2
    bits: list[int] = []  # low-order bit of each value first

    def put(value: int, count: int) -> None:
        bits.extend((value >> k) & 1 for k in range(count))

    def used_one() -> None:
        nonlocal enlarge_in, num_bits
        enlarge_in -= 1
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1

    def emit_w() -> None:
        if w in to_create:
            put(0 if w[0] < 256 else 1, num_bits)
            put(w[0], 8 if w[0] < 256 else 16)
            used_one()
            to_create.discard(w)
        else:
            put(dictionary[w], num_bits)
        used_one()

    for i in range(0, len(data), 2):
        c = (data[i] | data[i + 1] << 8,)
        if c not in dictionary:
            dictionary[c] = len(dictionary) + 3
            to_create.add(c)
        if w + c in dictionary:
            w += c
            continue
        emit_w()
        dictionary[w + c] = len(dictionary) + 3
        w = c
    if w:
        emit_w()
    put(2, num_bits)  # the end of the stream
    bits += [0] * (6 - len(bits) % 6)  # lz-string always ends with a padding character
    out = "".join(KEY[int("".join(map(str, bits[i:i + 6])), 2)] for i in range(0, len(bits), 6))
    return out + "=" * (-len(out) % 4)


def decompress_from_base64(data: str) -> str:
    values = [KEY.index(ch) for ch in data if ch != "="]
    bits = [(v >> k) & 1 for v in values for k in range(5, -1, -1)]
    at = 0

    def read(count: int) -> int:  # past the end, zeros
        nonlocal at
        at += count
        return sum(b << k for k, b in enumerate(bits[at - count:at]))

    first = read(2)
    if first == 2:
        return ""
    dictionary: list = [0, 1, 2, [read(8 if first == 0 else 16)]]
    enlarge_in, num_bits = 4, 3
    w = dictionary[3]
    result = list(w)
    while True:
        if at // 6 > len(values):
            return ""
        c = read(num_bits)
        if c in (0, 1):
            dictionary.append([read(8 if c == 0 else 16)])
            c = len(dictionary) - 1
            enlarge_in -= 1
        elif c == 2:
            data = b"".join(u.to_bytes(2, "little") for u in result)
            return data.decode("utf-16-le", "surrogatepass")
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1
        if c < len(dictionary):
            entry = list(dictionary[c])
        elif c == len(dictionary):
            entry = w + [w[0]]
        else:
            raise ValueError("not an lz-string")
        result += entry
        dictionary.append(w + [entry[0]])
        enlarge_in -= 1
        w = entry
        if enlarge_in == 0:
            enlarge_in, num_bits = 2 ** num_bits, num_bits + 1
