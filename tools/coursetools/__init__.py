"""The course's tools: snippets, pages, standalone files, evidence, site."""
