"""Sota Casino: provably fair Casino War and Sota (classic War).

Importing this package imports nothing heavy, so the pure core and the offline verifier run
without Flask or SQLAlchemy installed. The app lives in :mod:`sota_casino.factory`.
"""

from __future__ import annotations

__version__ = "0.1.0"
