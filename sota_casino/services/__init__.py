"""Use cases. Each takes a SQLAlchemy ``Session``; each refusal is a
:class:`~sota_casino.core.errors.CasinoError`.

Every public function that takes the session says how it treats transactions, by one of the
decorators of :mod:`.tx` right above its ``def`` (``tests/integration/test_transactions.py`` holds
every module to it):

- ``@transactional`` (writes) or ``@read_only``: a use case. It opens its own transaction,
  writes its audit entries inside it and commits, retrying serialization failures.
- ``@own_transactions``: it opens transactions of its own otherwise (it calls several use cases,
  or reads in short reads of its own connections).
- ``@in_transaction``: a step of its caller's transaction (``audit.record``, ``ledger.post``,
  ``settings.current``, ...). It opens and commits nothing, so its work is committed or undone
  with the caller's.

Calling the first two kinds inside an open transaction raises
:class:`~.tx.NestedTransaction` at once (instead of losing the caller's work), and the last kind
with none open raises :class:`~.tx.OutsideTransaction`. Private helpers (``_name``) are steps of
the module's own use cases.
"""
