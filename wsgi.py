"""`gunicorn wsgi:app` (settings in gunicorn.conf.py)."""

from sota_casino.wsgi import app

__all__ = ["app"]
