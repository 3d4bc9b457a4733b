"""MkDocs' live-reload server for `course serve`, started as `mkdocs serve`
starts it (mkdocs/commands/serve.py, MkDocs 1.6.1, read 2026-12-02), but
its watcher looks every POLL_SECONDS, where `mkdocs serve` looks every half
second and has no option for it: a save is on the page that much sooner.

    python -m coursetools.site.live MKDOCS_YML PORT"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile

# A tenth of a second is past what a reader notices, and polling a few
# hundred files that often costs a few percent of one core.
POLL_SECONDS = 0.1
# How long a burst of saves is let settle before a rebuild: MkDocs' value.
SETTLE_SECONDS = 0.1
HOST = "127.0.0.1"


def main(argv: list[str]) -> int:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.livereload import LiveReloadServer

    config_file, port = argv[0], int(argv[1])
    logging.basicConfig(level=logging.INFO, format="%(levelname)-7s -  %(message)s", stream=sys.stderr)
    site_dir = tempfile.mkdtemp(prefix="course-serve-")
    url = f"http://{HOST}:{port}/"

    def get_config():
        config = load_config(config_file=config_file, site_dir=site_dir)
        config.site_url = url
        return config

    def builder(config=None):
        logging.getLogger("mkdocs").info("Building documentation...")
        build(config or get_config(), serve_url=url, dirty=True)

    config = get_config()
    config.plugins.on_startup(command="serve", dirty=True)
    server = LiveReloadServer(builder=builder, host=HOST, port=port, root=site_dir, polling_interval=POLL_SECONDS)
    server.build_delay = SETTLE_SECONDS
    try:
        builder(config)
        server.watch(config.docs_dir)
        server.watch(config.config_file_path)
        server = config.plugins.on_serve(server, config=config, builder=builder)
        try:
            server.serve()
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
    finally:
        config.plugins.on_shutdown()
        shutil.rmtree(site_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
