"""The bare baseline of ``python -m bench load``: one insert transaction per request.

Served by the same gunicorn settings (gunicorn.conf.py) on the same kind of database as the
service, with the same engine setup (SQLite's pragmas and ``BEGIN IMMEDIATE`` for a write), so
the ratio of the service's rate to this one says how many bare transactions a round costs.
``gunicorn -c gunicorn.conf.py 'bench.baseline_app:create_app()'`` with ``DATABASE_URL`` set.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from flask import Flask
from flask import jsonify
from flask.typing import ResponseReturnValue

from sota_casino.db import make_engine
from sota_casino.services.tx import WRITES

metadata = sa.MetaData()
rows = sa.Table(
    "bench_baseline_rows",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("body", sa.String(64), nullable=False),
)
_INSERT = rows.insert()


def create_app(url: str | None = None) -> Flask:
    """The baseline on ``url`` (default: ``DATABASE_URL``, as gunicorn serves it)."""
    app = Flask(__name__)
    engine = make_engine(url or os.environ["DATABASE_URL"])
    app.extensions["bench.engine"] = engine  # for a caller in the same process to dispose

    @app.post("/insert")
    def insert_one() -> ResponseReturnValue:
        with engine.connect().execution_options(**{WRITES: True}) as connection:
            with connection.begin():
                connection.execute(_INSERT, {"body": "one row"})
        return jsonify({"ok": True}), 201

    return app
