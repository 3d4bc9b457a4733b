"""The sides `course evidence compare` sets against each other, by name:
"promoted" (the records the page shows, from the evidence's state), a tag
of the lesson's records, or the path of a lesson's --json output (a
student's run, from any GPU) or of a record file. The comparison itself is
the rule's (rule/carry.py); this only finds and reads the runs."""

from __future__ import annotations

from pathlib import Path

from ..errors import Diagnostic, EvidenceError, UsageError, display_path
from ..record.format import SUFFIX, check_tag, load_record, record_path
from ..record.strictjson import load_json
from ..rule.carry import Side, side
from ..sources.manifest import Lesson
from . import state as ev_state

PROMOTED = "promoted"


def load_side(lesson: Lesson, name: str) -> Side:
    """A side by name: "promoted", a tag of this lesson's records, or a path
    to a lesson's --json output (or to a record file)."""
    if name == PROMOTED:
        unchecked = ""
        if ev_state.state_path().exists():
            st = ev_state.of(lesson)
        else:
            # A build without the tools (the student preset) writes no state
            # file: verify this lesson's promotion here, once, instead; on a
            # machine without OpenSSH every rule but the reviewer's
            # signature, and the output says so.
            import shutil

            from . import verify
            signature = shutil.which("ssh-keygen") is not None
            unchecked = "" if signature else " [its reviewer's signature not checked: ssh-keygen is not installed]"
            st = verify.state_of(lesson, signature=signature)
        if st.record is None:
            raise UsageError(f"{lesson.target} has no promoted record that is valid today ({st.state}); "
                             "name a tag or a --json file instead")
        label = f"promoted {st.entry['tag']}"
        return side(label + unchecked, st.record["results"], label)
    if "/" not in name and not name.endswith(".json") and not name.endswith(SUFFIX):
        check_tag(name)
        path = record_path(lesson, name)
        if not path.exists():
            raise UsageError(f"{display_path(path)}: no record of {lesson.target} with tag '{name}'")
        return side(name, load_record(path)["results"], name)
    path = Path(name)
    shown = display_path(path)
    if name.endswith(SUFFIX):
        results = load_record(path)["results"]
    else:
        try:
            data = load_json(path, f"a --json output of {lesson.target} (or a record of it)")
        except EvidenceError as e:  # a student's file is input, not the course's evidence
            raise UsageError(e.diagnostics) from None
        results = data.get("results") if isinstance(data.get("results"), dict) else data
    if not isinstance(results, dict) or results.get("lesson") != lesson.target:
        got = results.get("lesson") if isinstance(results, dict) else None
        raise UsageError(Diagnostic(shown, 0, 0, f"is the output of '{got}', expected {lesson.target}'s --json output"))
    if results.get("listed") is True:
        raise UsageError(Diagnostic(shown, 0, 0, "was written with --list: it lists a plan and holds no times; "
                                    "run the program without --list"))
    return side(shown, results, shown)
