"""Gunicorn settings for production: `gunicorn wsgi:app` reads this file from the working directory.

Environment: PORT (default 8000), HOST (default 0.0.0.0), WEB_CONCURRENCY (workers, default
2 × cores + 1), FORWARDED_ALLOW_IPS (the proxy's address; default 127.0.0.1).

Behind a reverse proxy (nginx, a load balancer) that terminates TLS, set FORWARDED_ALLOW_IPS to
the proxy's address so gunicorn trusts its X-Forwarded-Proto header: then the app sees HTTPS
(HSTS is sent, Secure cookies work). Never use "*" unless only the proxy can reach gunicorn.
For the client address used by login throttling, also set the app's TRUSTED_PROXIES to the
number of proxies in front (X-Forwarded-For).
"""

from __future__ import annotations

import multiprocessing
import os

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
timeout = 30
graceful_timeout = 30
keepalive = 5
# Restart workers now and then, so a slow leak can never grow without bound.
max_requests = 2000
max_requests_jitter = 200

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(a)s"'

forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
secure_scheme_headers = {"X-FORWARDED-PROTO": "https"}
# Request limits in front of the app's own MAX_CONTENT_LENGTH.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
