/* Draw a playing card as HTML (the same markup as the templates' card macro). */
"use strict";

window.SotaCards = (function () {
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  // The spoken names, in the page's language (the same message ids as the server's).
  const SUIT_NAMES = { C: gettext("clubs"), D: gettext("diamonds"), H: gettext("hearts"), S: gettext("spades") };
  const RANK_NAMES = {
    2: gettext("two"), 3: gettext("three"), 4: gettext("four"), 5: gettext("five"), 6: gettext("six"),
    7: gettext("seven"), 8: gettext("eight"), 9: gettext("nine"), T: gettext("ten"), J: gettext("jack"),
    Q: gettext("queen"), K: gettext("king"), A: gettext("ace"),
  };
  const COURT = "JQK";

  function span(cls, text) {
    const s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    return s;
  }

  function corner(where, rank, suit) {
    const c = span("corner " + where, "");
    c.append(span("rank", rank), span("suit", suit));
    return c;
  }

  /* The card's spoken name, as its drawing is named: "nine of spades". */
  function name(code) {
    return code[0] === "X" ? gettext("joker")
      : gettext("%(rank)s of %(suit)s", { rank: RANK_NAMES[code[0]], suit: SUIT_NAMES[code[1]] });
  }

  /* Return a .card element for a card code like "TD" or "X1"; extra is a space-separated class
   * list. A card `laidFaceDown` (a war's, shown so the game can be followed) is drawn with a
   * dashed edge and named so, in words, not only by its edge. */
  function card(code, extra, laidFaceDown) {
    const el = document.createElement("div");
    const joker = code[0] === "X";
    const court = !joker && COURT.includes(code[0]);
    const red = joker ? code === "X1" : "DH".includes(code[1]);
    el.className = "card" + (red ? " red" : "") + (joker ? " joker" : "") +
      (court ? " court-card rank-" + code[0] : "") + (extra ? " " + extra : "") +
      (laidFaceDown ? " face-down-shown" : "");
    el.setAttribute("role", "img");
    el.dataset.card = code;
    const said = laidFaceDown ? gettext("%(card)s, laid face down", { card: name(code) }) : name(code);
    el.setAttribute("aria-label", said);
    if (laidFaceDown) el.title = said; // the words on hover too: the dashed edge alone says nothing
    const rank = joker ? "★" : (code[0] === "T" ? "10" : code[0]);
    const suit = joker ? "" : SUITS[code[1]];
    let middle;
    if (court) {
      middle = span("court", "");
      middle.setAttribute("aria-hidden", "true");
      middle.append(span("figure", ""), span("letter", rank), span("court-suit", suit));
    } else {
      middle = span("pip", joker ? "★" : suit);
    }
    el.append(corner("top", rank, suit), middle, corner("bottom", rank, suit));
    return el;
  }

  function back(extra) {
    const el = document.createElement("div");
    el.className = "card back" + (extra ? " " + extra : "");
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", gettext("card face down"));
    return el;
  }

  function label(code) {
    if (code[0] === "X") return gettext("joker");
    return (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
  }

  return { card, back, label, name };
})();
