"""Who won a Sota game, in words: a whole sentence for each kind of winner.

A sentence composed from a seat's label ("%(name)s wins" with "Dealer") cannot be right in
every language: Norwegian says "Dealeren vinner", the dealer with its article, and Portuguese
"O crupiê vence". The game's page writes its result with these sentences, and its script and the
fairness page's verifier read the same ones from the page's translations for the scripts
(:func:`.i18n.scripts_words`), so each is written here once.
"""

from __future__ import annotations

from typing import Final

from babel.support import NullTranslations

from ..core import sota
from ..core.marks import N_

#: A winner that is no single seat: a draw, or one of the two teams.
SIDES: Final = {
    "draw": N_("A draw"),
    "team_0": N_("You win!"),
    "team_1": N_("The dealer's team wins"),
}
#: A seat that won: the player's (seat 0) and the dealer's (seat 1).
SEATS: Final = (N_("You win!"), N_("Dealer wins"))
#: Any further seat, a computer player's: CPU 1 is seat 2.
CPU_WINS: Final = N_("CPU %(num)s wins")


def winners(books: NullTranslations) -> dict[str, str]:
    """Return every winner's sentence in ``books``' language, by the winner as text: ``"draw"``,
    ``"team_0"``, ``"team_1"`` and each seat's number (``"1"``: "Dealer wins")."""
    said = {side: books.gettext(message) for side, message in SIDES.items()}
    for seat in range(max(sota.SEAT_COUNTS)):
        said[str(seat)] = (
            books.gettext(SEATS[seat])
            if seat < len(SEATS)
            else books.gettext(CPU_WINS) % {"num": seat - 1}
        )
    return said
