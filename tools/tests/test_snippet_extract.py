"""What a good extraction produces: nesting, dedent, fences, links back
to the source, CRLF, byte-for-byte reproducibility; and a property test
over generated sources."""

from __future__ import annotations


from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from coursetools.sources import snippets


def extract(text: str | bytes, path="lessons/day01_x/a.cu"):
    data = text.encode() if isinstance(text, str) else text
    found, diags = snippets.parse_source(path, data)
    assert diags == [], [str(d) for d in diags]
    return {s.name: s for s in found}


def test_nesting_strips_inner_markers_from_the_outer():
    got = extract(
        "// snippet: outer\n"
        "int a;\n"
        "    // snippet: inner\n"
        "    int b;\n"
        "    // end snippet: inner\n"
        "int c;\n"
        "// end snippet\n"
    )
    assert got["outer"].lines == ["int a;", "    int b;", "int c;"]
    assert got["inner"].lines == ["int b;"]
    assert (got["inner"].start, got["inner"].end) == (4, 4)
    assert (got["outer"].start, got["outer"].end) == (2, 6)


def test_dedent_keeps_relative_indentation_and_blank_lines():
    got = extract(
        "void f() {\n"
        "    // snippet: body\n"
        "    if (x) {\n"
        "        y();\n"
        "\n"
        "    }\n"
        "    // end snippet\n"
        "}\n"
    )
    assert got["body"].lines == ["if (x) {", "    y();", "", "}"]


def test_fence_is_longer_than_any_backtick_run():
    got = extract("// snippet: ticks\n// a ```` run\nint a;\n// end snippet\n")
    block = snippets.render_block(got["ticks"], "a.cu")
    assert "`````cuda\n" in block and block.rstrip().endswith("`````")
    assert snippets.fence_for(["no ticks"]) == "```"


def test_crlf_extracts_like_lf():
    lf = "// snippet: s\nint a;\n  int b;\n// end snippet\n"
    assert extract(lf)["s"].lines == extract(lf.replace("\n", "\r\n").encode())["s"].lines


def test_artifact_links_back_to_the_source_lines(course, in_tmp):
    src = write(in_tmp / "lessons" / "day01_x" / "a.cu", "int z;\n// snippet: s\nint a;\n// end snippet\n")
    out = in_tmp / "build" / "snippets"
    assert course("snippets", src, "--lesson", "day01_x", "-o", out).code == 0
    text = (out / "day01_x" / "s.md").read_text()
    assert "[`lessons/day01_x/a.cu`, lines 3\u20133](../../../lessons/day01_x/a.cu#L3-L3)" in text
    assert "```cuda\nint a;\n```\n" in text
    assert "snippet:" not in text.split("\n", 1)[1]  # no marker leaks


def test_artifacts_are_byte_for_byte_reproducible(course, tmp_path, monkeypatch):
    """Two checkouts in different folders give identical bytes."""
    from coursetools import cli
    from coursetools.sources import manifest

    results = []
    for where in ("one", "two/deeper"):
        root = tmp_path / where
        write(root / "lessons" / "day01_x" / "a.cu", "// snippet: s\n\tint a;\n// end snippet\n")
        monkeypatch.chdir(root)
        monkeypatch.setattr(manifest, "ROOT", root)
        assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "build/snippets").code == 0
        results.append((root / "build/snippets/day01_x/s.md").read_bytes())
    assert results[0] == results[1]


def test_check_mode_reports_out_of_date(course, in_tmp):
    src = write(in_tmp / "lessons" / "day01_x" / "a.cu", "// snippet: s\nint a;\n// end snippet\n")
    out = in_tmp / "o"
    args = ("snippets", src, "--lesson", "day01_x", "-o", out)
    assert course(*args, "--check").code == 3
    assert course(*args).code == 0
    assert course(*args, "--check").code == 0


# -- property: extraction returns exactly the lines placed between markers --

names = st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,4}){0,2}", fullmatch=True)
code_line = st.from_regex(r"[ ]{0,4}[A-Za-z_(){};=+*0-9 `]{1,30}", fullmatch=True).filter(
    lambda s: s.strip() and "snippet" not in s.lower() and not s.strip().startswith(("/", "*"))
)


@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(code_line, min_size=1, max_size=8),
    before=st.lists(code_line, max_size=4),
    after=st.lists(code_line, max_size=4),
    name=names,
    indent=st.sampled_from(["", "    ", "\t"]),
    crlf=st.booleans(),
)
def test_property_extracts_exactly_the_placed_lines(body, before, after, name, indent, crlf):
    lines = before + [f"{indent}// snippet: {name}"] + [indent + b for b in body] + [f"{indent}// end snippet"] + after
    nl = "\r\n" if crlf else "\n"
    got = extract(nl.join(lines) + nl)[name]
    # Dedent removes only what every placed line shares.
    placed = [indent + b for b in body]
    common = min(len(p) - len(p.lstrip(" \t")) for p in placed)
    expected = [p[common:] for p in placed]
    assert got.lines == expected
    assert got.start == len(before) + 2 and got.end == len(before) + 1 + len(body)


def test_preprocessor_lines_do_not_stop_the_dedent():
    got = extract(
        "    // snippet: guarded\n"
        "    cluster.sync();\n"
        "#ifndef DROP\n"
        "    cluster.sync();\n"
        "#endif\n"
        "    // end snippet\n"
    )
    assert got["guarded"].lines == ["cluster.sync();", "#ifndef DROP", "cluster.sync();", "#endif"]
