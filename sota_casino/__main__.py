"""``python -m sota_casino odds``: the exact Casino War odds table, without Flask."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .core.casino_war import BONUS_MODES
from .core.errors import InvalidRules
from .core.odds import format_odds_by_decks


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m sota_casino")
    commands = parser.add_subparsers(dest="command", required=True)
    odds = commands.add_parser("odds", help="print the exact Casino War odds for 1 to 8 decks")
    odds.add_argument("--tie-payout", type=int, default=10, help="tie bet pays N to 1 (0-30)")
    odds.add_argument("--bonus", choices=BONUS_MODES, default="none")
    args = parser.parse_args(argv)
    try:
        print(format_odds_by_decks(args.tie_payout, args.bonus))
    except InvalidRules as exc:
        parser.error(exc.message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
