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


def test_the_build_writes_the_evidence_state_again_whenever_what_it_covers_changes():
    """Every file the evidence state covers (its fingerprint: the evidence,
    the build's own files, each lesson's sources digest) is a prerequisite
    of the build's rule that writes it: otherwise an edit leaves the state
    older than what it covers, and render refuses it while the build
    thinks it up to date (seen after a re-configure)."""
    import pytest
    from coursetools.evidence import state
    from coursetools.sources import manifest

    build = manifest.build_dir()
    make = build / "CMakeFiles" / "course_pages.dir" / "build.make"
    if not make.is_file():
        pytest.skip("no Makefile build here")
    deps = {str(build / line.split(": ", 1)[1].strip()) for line in make.read_text().splitlines()
            if line.startswith("evidence-state.json: ")}  # the build's own files named relative to it
    lessons = manifest.load()
    covered = {str(p) for p in state.covered_files(build)}
    covered |= {str(manifest.ROOT / f) for l in lessons for f in l.digest_files(build)}
    assert covered - deps == set()
