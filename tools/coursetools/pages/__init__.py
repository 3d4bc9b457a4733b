"""Pages: what a lesson's template, its snippets and its promoted
evidence become.

  render    every page and the README's day table
  page      the page API a template calls (rows, verdicts, causes, figures)
  marks     how a helper's output is told apart from typed text
  sandbox   the template's sandbox and its limits
  prose     the check that no number is typed into a page
  numbers   what counts as a typed number
  plots     charts as plain SVG
  bench     how long extraction and rendering take at scale
"""
