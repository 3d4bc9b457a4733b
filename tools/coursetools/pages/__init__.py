"""Pages: what a lesson's template, its snippets and its promoted evidence
become (its modules: research/ARCHITECTURE.md)."""
