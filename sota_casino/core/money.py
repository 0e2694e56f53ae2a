"""Money facts every layer shares: the currencies and the largest amount anything accepts."""

from __future__ import annotations

from typing import Final

#: Chips are counted in hundredths of a chip, sweets in whole sweets.
CURRENCIES: Final = ("chips", "sweets")
#: 2**53 - 1 keeps every amount exact in JavaScript too.
MAX_AMOUNT: Final = 2**53 - 1
