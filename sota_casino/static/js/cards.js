/* Draw a playing card as HTML (the same markup as the templates' card macro). */
"use strict";

window.SotaCards = (function () {
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAMES = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
    T: "ten", J: "jack", Q: "queen", K: "king", A: "ace",
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

  /* Return a .card element for a card code like "TD" or "X1"; extra is a space-separated class list. */
  function card(code, extra) {
    const el = document.createElement("div");
    const joker = code[0] === "X";
    const court = !joker && COURT.includes(code[0]);
    const red = joker ? code === "X1" : "DH".includes(code[1]);
    el.className = "card" + (red ? " red" : "") + (joker ? " joker" : "") +
      (court ? " court-card rank-" + code[0] : "") + (extra ? " " + extra : "");
    el.setAttribute("role", "img");
    el.dataset.card = code;
    el.setAttribute("aria-label", joker ? "joker" : RANK_NAMES[code[0]] + " of " + SUIT_NAMES[code[1]]);
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
    el.setAttribute("aria-label", "card face down");
    return el;
  }

  function label(code) {
    if (code[0] === "X") return "joker";
    return (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
  }

  return { card, back, label };
})();
