"""The application factory."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from . import config
from .instance import read_or_create
from .locations import STATIC
from .locations import TEMPLATES


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Create and configure an instance of the casino app.

    :param test_config: settings that replace the environment's (tests pass their own).
    """
    app = _configured(test_config)

    from . import background
    from . import cli
    from . import db
    from . import web

    db.init_app(app)
    cli.init_app(app)
    web.init_app(app)
    background.init_app(app)
    return app


def check_settings() -> None:
    """Check the environment's settings as every serving process will start with them, and
    start nothing (no thread; one connection, closed): for gunicorn's master, before it forks
    workers that would each fail alike, and be started again, and again. It makes the
    instance's secret and signing key on a first start, so the workers read one key, not each
    their own.

    :raises SettingsError: naming the first setting the app cannot start with, or a key file
        holding a key that ``flask keys rotate`` retired (a server the new key file was not
        copied to would go on signing with the old key).
    """
    from sqlalchemy.exc import SQLAlchemyError

    from . import db
    from .core.errors import CasinoError
    from .services import fairness
    from .services.context import ServiceContext
    from .services.context import load_or_create_signing_key

    app = _configured(None)
    engine = db.app_engine(app.config)
    path = app.config["SIGNING_KEY_FILE"]
    context = ServiceContext(signing_key=load_or_create_signing_key(path), settings=app.config)
    session = db.make_sessionmaker(engine, context)()
    try:
        retired = fairness.key_retired_at(session)
    except (SQLAlchemyError, CasinoError):
        retired = None  # no database to ask (yet): the workers' requests and /readyz say why
    finally:
        session.close()
        engine.dispose()
    if retired is not None:
        raise config.SettingsError(
            f"SIGNING_KEY_FILE {path} holds key {context.public_key_hex[:16]}…, which `flask "
            f"keys rotate` retired on {retired:%Y-%m-%d %H:%M} UTC: copy the key file in use "
            "here (`flask keys show` names it) and start again"
        )


def _configured(test_config: Mapping[str, Any] | None) -> Flask:
    """The app with its settings, the instance folder's defaults filled in, and nothing else."""
    app = Flask(
        __name__,
        instance_relative_config=True,
        template_folder=str(TEMPLATES),
        static_folder=str(STATIC),
    )
    app.config.from_mapping(config.defaults())
    app.config.update(config.from_environment() if test_config is None else test_config)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    if not app.config["DATABASE_URL"]:
        app.config["DATABASE_URL"] = f"sqlite:///{Path(app.instance_path) / 'sota_casino.db'}"
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = _instance_secret(Path(app.instance_path) / "secret_key")
    if not app.config["SIGNING_KEY_FILE"]:
        app.config["SIGNING_KEY_FILE"] = str(Path(app.instance_path) / "signing_key.pem")
    return app


def app_from_environment() -> Flask:
    """Create the app configured by the environment (``app.py``, ``wsgi``), or end the process
    with one line saying which setting it cannot start with, in place of a traceback."""
    try:
        return create_app()
    except config.SettingsError as error:
        raise SystemExit(f"Error: {error}") from None


def _instance_secret(path: Path) -> str:
    """Read the session secret from ``path``, creating it (mode 0600) on first start."""
    return read_or_create(path, lambda: secrets.token_hex(32).encode()).decode().strip()
