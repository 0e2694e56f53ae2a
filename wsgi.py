"""`gunicorn wsgi:app` (settings in gunicorn.conf.py)."""

from sota_casino.factory import create_app

app = create_app()
