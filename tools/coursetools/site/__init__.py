"""The course as a static site, MkDocs with the Material theme (its
modules: research/ARCHITECTURE.md)."""
