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


def test_the_cmake_files_left_out_of_the_digest_cannot_shape_a_recorded_binary():
    """The digest covers cmake/CourseLesson.cmake and not the course's tool
    and test files, because the gpu-only build that makes a recorded
    binary never reads those: the top CMakeLists.txt includes them only
    where the tools are on, includes nothing else of cmake/ that the digest
    does not cover, and writes the manifest (whose extra flags verify
    refuses) after every include."""
    import re

    from coursetools.sources import digest, manifest

    top = (manifest.ROOT / "CMakeLists.txt").read_text()
    code = re.sub(r"#[^\n]*", "", top)
    covered = {f.rsplit("/", 1)[-1][:-len(".cmake")] for f in digest.BUILD_FILES if f.endswith(".cmake")}
    guarded = re.findall(r"if\(COURSE_TOOLS\)\s*include\((\w+)\)\s*endif\(\)", code)
    assert sorted(guarded) == sorted(digest.TOOLS_ONLY)
    bare = re.sub(r"if\(COURSE_TOOLS\)\s*include\(\w+\)\s*endif\(\)", "", code)
    assert set(re.findall(r"include\((\w+)\)", bare)) <= covered | {"CTest"}
    assert code.rstrip().endswith("course_write_manifest()")
    files = digest.build_files(manifest.ROOT)
    assert "cmake/CourseLesson.cmake" in files and not any("CourseTools" in f or "CheckArch" in f for f in files)


def test_a_long_build_file_is_read_in_one_pass():
    """A hostile CMakeLists.txt of 600 KB of one-letter arguments: each
    token's line was counted from the file's start (about 26 s of CPU on
    the course machine), where one pass takes well under one. The bound,
    CPU time not wall time, is far above an honest run on a busy machine."""
    import time

    from coursetools.sources import hashlex

    start = time.process_time()
    tokens = hashlex.cmake_tokens_at("a " * 299_999 + "\nb")
    assert time.process_time() - start < 8
    assert tokens[-1] == ("b", 2) and len(tokens) == 300_000
