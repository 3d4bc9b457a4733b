"""The sources digest reads code, not comments or layout."""

from __future__ import annotations

from coursetools.sources import cpplex, digest

BASE = b'#include "course.cuh"\n#define F(x) (x + 1)\nint main() { const char* s = "a  b"; return F(2); }\n'


def d(src: bytes) -> str:
    return digest.file_digest(src)


def test_comments_and_layout_do_not_count():
    edited = (b"// a new comment\n#include \"course.cuh\"\n/* block\n comment */\n#define F(x) (x +   1)\n"
              b"int main()\n{\n    const char* s = \"a  b\";  // why\n    return F(2);\n}\n")
    assert d(edited) == d(BASE)


def test_code_changes_count():
    assert d(BASE.replace(b"x + 1", b"x + 2")) != d(BASE)
    assert d(BASE.replace(b'"a  b"', b'"a b"')) != d(BASE)  # inside a string, spaces count
    assert d(BASE.replace(b"#define F(x)", b"#define F (x)")) != d(BASE)  # a different macro
    assert d(BASE.replace(b"return F(2);", b"return F(2) + +1;")) != d(BASE.replace(b"return F(2);", b"return F(2) ++1;"))


def test_a_directive_ends_at_its_line():
    a = b"#define A 1\nint x = A;\n"
    b = b"#define A 1 int x = A;\n"
    assert d(a) != d(b)


def test_raw_strings_are_literals():
    toks = cpplex.code_tokens('auto s = R"x(a  // not a comment\n b)x"; int y;')
    assert 'R"x(a  // not a comment\n b)x"' in toks and "y" in toks
