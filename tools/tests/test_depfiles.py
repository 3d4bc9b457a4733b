"""The compiler's dependency files, as the digest reads them: every
prerequisite, never a rule's target, nothing from the build's own output."""

from __future__ import annotations

from coursetools.sources import includes


def test_targets_are_never_read_as_prerequisites_in_either_spacing():
    for text in ("lessons/d/CMakeFiles/d.dir/d.cu.o : /r/lessons/d/d.cu \\\n    /r/common/course.cuh\n",
                 "CMakeFiles/d.dir/d.cu.o: /r/lessons/d/d.cu \\\n  /r/common/course.cuh\n",
                 "CMakeFiles/d.dir/d.cu.o: \\\n  /r/lessons/d/d.cu \\\n  /r/common/course.cuh\n"):
        assert includes._depfile_paths(text) == ["/r/lessons/d/d.cu", "/r/common/course.cuh"], text


def test_phony_rules_and_escaped_spaces():
    text = "o.o: /r/a\\ b.cuh /r/c.cuh\n/r/a\\ b.cuh:\n/r/c.cuh:\n"
    assert includes._depfile_paths(text) == ["/r/a b.cuh", "/r/c.cuh"]


def test_the_build_folder_is_not_a_source(tmp_path):
    root = tmp_path / "repo"
    build = root / "build-gpu"
    dep = build / "lessons" / "d" / "CMakeFiles" / "d.dir" / "d.cu.o.d"
    dep.parent.mkdir(parents=True)
    (root / "lessons" / "d").mkdir(parents=True)
    (root / "lessons" / "d" / "d.cu").write_text("int main() {}\n")
    dep.write_text(f"CMakeFiles/d.dir/d.cu.o: {root}/lessons/d/d.cu {build}/generated.cuh\n")
    assert includes.compiler_read("lessons/d", "d", build, root) == {"lessons/d/d.cu"}
