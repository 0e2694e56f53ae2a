"""``python -m ops`` is ``python -m ops.faults``."""

from .faults import main

raise SystemExit(main())
