"""Evidence: the recorded runs kept in the repository, promoted by a
reviewer, and what CI re-checks (its modules: research/ARCHITECTURE.md)."""
