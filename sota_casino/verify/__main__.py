"""``python -m sota_casino.verify``: the verifier's command line."""

import sys

from .cli import main

sys.exit(main())
