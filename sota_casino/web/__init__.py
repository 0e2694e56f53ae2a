"""The web layer: blueprints that parse, call one service, and render."""

from __future__ import annotations

from flask import Flask


def init_app(app: Flask) -> None:
    """Register every blueprint, the error handlers, the security layer and the filters."""
    from . import api
    from . import assets
    from . import auth
    from . import casino_war
    from . import errors
    from . import fairness
    from . import format
    from . import health
    from . import history
    from . import i18n
    from . import lobby
    from . import operator
    from . import operator_api
    from . import operator_controls  # noqa: F401  # its routes hang on the console's blueprint
    from . import operator_lists  # noqa: F401  # its routes hang on the console's blueprint
    from . import protocol
    from . import rules
    from . import security
    from . import sota
    from . import stats
    from .inputs import IdConverter
    from .inputs import check_repeated_fields

    # Converters must exist before the routes that use them are registered.
    app.url_map.converters["id"] = IdConverter
    # A path with "//" is no route (404, JSON under /api/), not Werkzeug's HTML redirect to
    # the merged path: a client's URL built wrong is named, and every answer keeps its format.
    app.url_map.merge_slashes = False
    errors.init_app(app)
    protocol.init_app(app)
    security.init_app(app)
    assets.init_app(app)
    i18n.init_app(app)
    format.init_app(app)
    for module in (
        health,
        lobby,
        auth,
        casino_war,
        sota,
        history,
        fairness,
        api,
        operator,
        operator_api,
    ):
        app.register_blueprint(module.bp)
    for module in (rules, stats):  # how to play, and the player's own statistics
        app.register_blueprint(module.bp)
    check_repeated_fields(app)
