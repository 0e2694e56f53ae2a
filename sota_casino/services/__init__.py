"""Use cases. Each takes a SQLAlchemy ``Session``, owns its transaction and writes its audit
entries inside it; each refusal is a :class:`~sota_casino.core.errors.CasinoError`."""
