"""The course as a static site (MkDocs with the Material theme).

  build     the site's sources from the pages, and `mkdocs build --strict`
  browser   the built site in headless Chromium, as students will see it
  explorer  the "Open in Compiler Explorer" links
"""
