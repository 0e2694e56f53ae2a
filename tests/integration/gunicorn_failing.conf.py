"""The production gunicorn.conf.py, with each worker's database failing in the middle of a
download that asks for it (see ``cut_support``), and a list read a few rows at a time."""

import runpy
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
production = runpy.run_path(str(HERE.parent.parent / "gunicorn.conf.py"))
globals().update({name: value for name, value in production.items() if not name.startswith("__")})


def post_worker_init(worker: Any) -> None:
    sys.path.insert(0, str(HERE))
    from cut_support import LIST_CHUNK
    from cut_support import failing_midway

    from sota_casino.services import lists

    lists.CHUNK = LIST_CHUNK
    worker.wsgi = failing_midway(worker.wsgi)
