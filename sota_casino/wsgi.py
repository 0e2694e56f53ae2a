"""The app on the configured database, for WSGI servers and the ``flask`` command of an
installed wheel: ``gunicorn sota_casino.wsgi:app`` or ``flask --app sota_casino.wsgi run``."""

from .factory import app_from_environment

app = app_from_environment()
