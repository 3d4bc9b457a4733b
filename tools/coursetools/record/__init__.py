"""Recording: what the GPU machine runs, with Python's standard library
alone (a test holds it; the GPU machine may have nothing else). Its
modules: research/ARCHITECTURE.md."""
