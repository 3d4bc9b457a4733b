"""MkDocs' live-reload server for `course serve`: `mkdocs serve --dirty`
itself (mkdocs/commands/serve.py, MkDocs 1.6.1, read 2026-12-02), but its
watcher looks every POLL_SECONDS, where `mkdocs serve` looks every half
second and has no option for it: a save is on the page that much sooner.
It swaps the server class serve() looks up by name at call time (1.6.1
does; a test holds it, so an upgrade that binds it otherwise fails there).
As `mkdocs serve`, a missing page gets the site's 404.html, and Ctrl-C
logs "Shutting down...".

    python -m coursetools.site.live MKDOCS_YML PORT"""

from __future__ import annotations

import functools
import logging
import sys

# A tenth of a second is past what a reader notices, and polling a few
# hundred files that often costs a few percent of one core.
POLL_SECONDS = 0.1
HOST = "127.0.0.1"


def main(argv: list[str]) -> int:
    from mkdocs import livereload
    from mkdocs.commands import serve

    logging.basicConfig(level=logging.INFO, format="%(levelname)-7s -  %(message)s", stream=sys.stderr)
    # serve() makes its server by this name: the same server, its watcher polling sooner
    serve.LiveReloadServer = functools.partial(livereload.LiveReloadServer, polling_interval=POLL_SECONDS)
    serve.serve(config_file=argv[0], build_type="dirty", dev_addr=f"{HOST}:{int(argv[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
