"""Gunicorn settings for production: `gunicorn wsgi:app` reads this file from the working directory.

Environment: PORT (default 8000), HOST (default 0.0.0.0), WEB_CONCURRENCY (workers, default
2 × cores + 1), FORWARDED_ALLOW_IPS (the proxy's addresses; default 127.0.0.1,::1).

Behind a reverse proxy (nginx, a load balancer) that terminates TLS, set FORWARDED_ALLOW_IPS to
the proxy's address so gunicorn trusts its X-Forwarded-Proto header: then the app sees HTTPS
(HSTS is sent, Secure cookies work). Never use "*" unless only the proxy can reach gunicorn.
For the client address used by login throttling, also set the app's TRUSTED_PROXIES to the
number of proxies in front (X-Forwarded-For): the app believes those headers too only from a
peer in FORWARDED_ALLOW_IPS, so a client that reaches gunicorn directly forges no address.

Slow clients: the sync workers serve one request each, so a client that sends or reads slowly
holds a worker until ``timeout``. In production put a buffering proxy in front (nginx buffers
request and response bodies by default): the worker then sees only complete requests and
hands its answer off at once. Load balancers check ``/healthz`` (alive) and ``/readyz``
(database reachable, migrations at head).

A worker busy on one request longer than ``timeout`` is killed, and its client gets gunicorn's
HTML 500. So the app bounds each wait for the database (DB_LOCK_TIMEOUT_MS,
DB_STATEMENT_TIMEOUT_MS) well under it and answers a 503 when one runs out; the master refuses
to start if either is more than half of ``timeout`` (also when ``--timeout`` or
GUNICORN_CMD_ARGS changes it).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from typing import Any

from sota_casino.config import FORWARDED_ALLOW_IPS
from sota_casino.web.protocol import SERVER_MAX_HEADER_FIELD
from sota_casino.web.protocol import SERVER_MAX_HEADER_FIELDS
from sota_casino.web.protocol import SERVER_MAX_REQUEST_LINE

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
timeout = 30
graceful_timeout = 30
keepalive = 5
# Restart workers now and then, so a slow leak can never grow without bound; but seldom: a new
# worker imports and builds the app anew (about a second of CPU), and on a busy machine the
# requests queued meanwhile wait for it. At 2,000 a worker restarted every 15 s under full load,
# and a Casino War load of 8 clients had a p99 of 0.8 s where it is 40 ms at 20,000.
max_requests = 20000
max_requests_jitter = 2000

# No control socket: by default every gunicorn master of a host shares one path under $HOME.
control_socket_disable = True

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(a)s"'

forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", FORWARDED_ALLOW_IPS)
secure_scheme_headers = {"X-FORWARDED-PROTO": "https"}
# Above the app's own limits (sota_casino/web/protocol.py: 4094, 100 fields of 8190 bytes), so
# the app answers an over-long request in its own format (JSON under /api/); only past these
# does gunicorn refuse it first, with its own HTML page.
limit_request_line = SERVER_MAX_REQUEST_LINE
limit_request_fields = SERVER_MAX_HEADER_FIELDS
limit_request_field_size = SERVER_MAX_HEADER_FIELD

PR_SET_PDEATHSIG = 1


def on_starting(server: Any) -> None:
    """Refuse to start, in one line, with a setting the app cannot start with (a worker would
    fail on it, and be started again without end), or if a request could wait for the database
    as long as a worker may live; warn if any host name is answered (pages build addresses from
    the request's).

    The workers read the same environment, so the settings checked here are theirs.
    """
    from sota_casino import config
    from sota_casino import factory

    try:
        factory.check_settings()
        settings = config.defaults() | config.from_environment()
    except config.SettingsError as error:
        raise RuntimeError(str(error)) from None  # gunicorn prints "Error: ..." and exits 1
    problems = config.database_wait_problems(settings, server.cfg.timeout)
    if problems:
        raise RuntimeError("; ".join(problems))
    if warning := config.host_warning(settings):
        server.log.warning(warning)


def post_fork(server: Any, worker: Any) -> None:
    """Make the kernel stop this worker when the master dies, even by kill -9.

    Orphaned workers would otherwise go on serving and hold the port, so a new master could
    not bind it. SIGKILL, not SIGTERM: a busy sync worker can take its time over SIGTERM. A
    request cut short was never acknowledged, and its transaction commits whole or not at all.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != worker.ppid:  # the master died before the line above
            os._exit(0)
