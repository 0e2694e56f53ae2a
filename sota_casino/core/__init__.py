"""The pure core: rules, fairness and odds.

Standard library and ``cryptography`` only: no Flask, no SQLAlchemy, no ``random``, no clock.
Seeds and times come in as arguments, so everything here replays anywhere.
"""
