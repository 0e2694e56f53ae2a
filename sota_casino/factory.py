"""The application factory."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from . import config
from .instance import instance_database
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
    # Flask documents wrapping wsgi_app so; typeshed declares it a method.
    app.wsgi_app = _KeysBeforeServing(app, app.wsgi_app)  # type: ignore[method-assign]
    return app


def make_instance_keys(app: Flask) -> None:
    """Make the instance's secret and signing key where they are missing, and read them: done
    when the app first serves (or before, by :func:`check_settings` and ``python app.py``), and
    by a command when it first signs. A command that only prints (``--help``, ``routes``)
    makes neither.

    :raises SettingsError: if either file cannot be made or read, or holds no key.
    """
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = _instance_secret(_secret_file(app))
    app.extensions["sota_casino.context"].signing_key  # noqa: B018 - made if missing


class _KeysBeforeServing:
    """The app's WSGI callable, which makes the instance's keys before it serves its first
    request (the session cookie needs the secret)."""

    def __init__(self, app: Flask, wsgi_app: Callable[..., Any]) -> None:
        self.app = app
        self.wsgi_app = wsgi_app
        self.made = False

    def __call__(self, environ: Any, start_response: Any) -> Any:
        if not self.made:
            make_instance_keys(self.app)  # idempotent: threads that race here read one file
            self.made = True
        return self.wsgi_app(environ, start_response)


def check_settings() -> None:
    """Check the environment's settings as every serving process will start with them, and
    start nothing (no thread; one connection, closed): for gunicorn's master, before it forks
    workers that would each fail alike, and be started again, and again. It makes the
    instance's secret and signing key on a first start (as :func:`make_instance_keys`), so
    the workers read one key, not each their own.

    :raises SettingsError: naming the first setting the app cannot start with, or a key file
        holding a key that ``flask keys rotate`` retired (a server the new key file was not
        copied to would go on signing with the old key).
    """
    from sqlalchemy.exc import SQLAlchemyError

    from . import db
    from .core.errors import CasinoError
    from .services import fairness
    from .services.context import ServiceContext

    app = _configured(None)
    engine = db.app_engine(app.config)
    path = app.config["SIGNING_KEY_FILE"]
    context = ServiceContext(signing_key_file=Path(path), settings=app.config)
    if not app.config["SECRET_KEY"]:
        _instance_secret(_secret_file(app))
    context.signing_key  # noqa: B018 - made if missing, before the workers read it
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
    if not app.config["DATABASE_URL"]:
        app.config["DATABASE_URL"] = f"sqlite:///{instance_database(app.instance_path)}"
    if not app.config["SECRET_KEY"] and _secret_file(app).exists():
        app.config["SECRET_KEY"] = _instance_secret(_secret_file(app))
    # Else None until make_instance_keys, which the first request or a signing command calls:
    # the app is built for every command, and one that only prints must make nothing.
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


def _secret_file(app: Flask) -> Path:
    return Path(app.instance_path) / "secret_key"


def _instance_secret(path: Path) -> str:
    """Read the session secret from ``path``, creating it (mode 0600, and its folder) if
    missing.

    :raises SettingsError: if it cannot be read or made.
    """
    try:
        return read_or_create(path, lambda: secrets.token_hex(32).encode()).decode().strip()
    except OSError as exc:
        raise config.SettingsError(
            f"the session secret {path} cannot be used: {exc.strerror}"
        ) from None
