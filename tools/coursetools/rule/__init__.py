"""The comparison rule and what is built on it, on rows and samples alone
(nothing here reads the evidence store: callers hand it the rows); the
programs' copy of verdict.py is common/course/detail/decide.cuh. Its
modules: research/ARCHITECTURE.md."""
