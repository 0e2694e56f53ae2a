/* The player's own records, kept in this browser (localStorage), on every page.
 *
 * A signed bundle only proves what the casino signed. What protects the player against a
 * casino that re-signs is what the player saw and sent, kept where the casino cannot change it:
 *   - the service's public key, pinned the first time a page shows it (trust on first use);
 *     a page showing another key says so loudly, and only an explicit "Trust the new key"
 *     replaces the pin;
 *   - every signed commitment document shown before play (`<script type="application/json"
 *     data-signed-commitment>` holding {"document", "signature"});
 *   - every decision and Prisoners of War move sent: forms with `data-record-action` (and
 *     data-round-id, data-seed-pair-id, data-nonce, data-game, optional data-move) are recorded
 *     on submit; scripts call `SotaRecords.recordAction(...)`.
 * "My records" (`[data-export-records]`) downloads them in the format the offline verifier reads
 * with `--records FILE`. The page's verifier compares each bundle with them (`compareBundle`).
 */
"use strict";

(function () {
  const STORE = "sota-casino.records.v1";
  const PIN = "sota-casino.pinned-key.v1";
  const FORMAT = "sota-casino-records";

  function load(name, empty) {
    try {
      const text = window.localStorage.getItem(name);
      return text ? JSON.parse(text) : empty;
    } catch (error) {
      return empty; // storage off (private mode) or damaged: nothing recorded
    }
  }

  function save(name, value) {
    try {
      window.localStorage.setItem(name, JSON.stringify(value));
      return true;
    } catch (error) {
      return false;
    }
  }

  function stored() {
    const records = load(STORE, null);
    return records && Array.isArray(records.commitments) && Array.isArray(records.actions)
      ? records : { commitments: [], actions: [] };
  }

  /* Sorted keys, no spaces: equal documents give equal text. */
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  // ---- the pinned key ----------------------------------------------------------------------

  function pinnedKey() {
    const pin = load(PIN, null);
    return pin && typeof pin.public_key_hex === "string" ? pin : null;
  }

  function isKey(hex) {
    return typeof hex === "string" && /^[0-9a-f]{64}$/.test(hex);
  }

  /* Pin `hex` if no key is pinned yet; never replaces a pinned key. */
  function pinFirstSeen(hex) {
    if (!isKey(hex) || pinnedKey()) return pinnedKey();
    save(PIN, { public_key_hex: hex, pinned_at: new Date().toISOString(), replaced: [] });
    return pinnedKey();
  }

  /* The user's explicit choice to trust another key from now on (the old one is kept). */
  function acceptKey(hex) {
    if (!isKey(hex)) throw new Error(gettext("not an Ed25519 public key: %(key)s", { key: String(hex).slice(0, 20) }));
    const old = pinnedKey();
    const replaced = old ? (old.replaced || []).concat([{ public_key_hex: old.public_key_hex, pinned_at: old.pinned_at }]) : [];
    save(PIN, { public_key_hex: hex, pinned_at: new Date().toISOString(), replaced });
    return pinnedKey();
  }

  // ---- recording ----------------------------------------------------------------------------

  function recordCommitment(signed) {
    if (!signed || typeof signed.document !== "object" || typeof signed.signature !== "string") return false;
    const records = stored();
    const text = canonical(signed);
    if (records.commitments.some((known) => canonical(known) === text)) return false;
    records.commitments.push({ document: signed.document, signature: signed.signature });
    return save(STORE, records);
  }

  function idOrNull(value) {
    if (value === undefined || value === null || value === "") return null;
    const number = Number(value);
    return Number.isSafeInteger(number) && number >= 0 ? number : null;
  }

  /* Record a decision ({round_id, game: "casino_war", action}) or a move ({round_id, game:
   * "sota", move, cards}). A later record of the same decision or move replaces the earlier
   * one: a refused attempt (say, a raise the balance could not cover) is followed by the
   * choice that counted. */
  function recordAction(action) {
    const roundId = idOrNull(action && action.round_id);
    if (roundId === null) throw new Error("a recorded action needs its round_id");
    const records = stored();
    const entry = {
      round_id: roundId,
      seed_pair_id: idOrNull(action.seed_pair_id),
      nonce: idOrNull(action.nonce),
      game: action.game,
    };
    if (action.game === "casino_war") {
      if (!["war", "surrender"].includes(action.action)) throw new Error(gettext("a Casino War decision is war or surrender"));
      entry.action = action.action;
    } else if (action.game === "sota") {
      if (!Array.isArray(action.cards) || !action.cards.every((c) => typeof c === "string")) {
        throw new Error(gettext("a Sota move is a list of cards"));
      }
      let move = idOrNull(action.move);
      if (move === null) { // not known to the caller: the next move of this round recorded here
        const made = records.actions.filter((a) => a.round_id === roundId && a.game === "sota");
        move = made.length ? Math.max(...made.map((a) => a.move)) + 1 : 0;
      }
      entry.move = move;
      entry.cards = action.cards.slice();
    } else {
      throw new Error("unknown game " + JSON.stringify(action.game));
    }
    const sameSlot = (a) => a.round_id === roundId && a.game === entry.game && (entry.game !== "sota" || a.move === entry.move);
    records.actions = records.actions.filter((a) => !sameSlot(a));
    records.actions.push(entry);
    save(STORE, records);
    return entry;
  }

  function exportDocument() {
    const records = stored();
    const pin = pinnedKey();
    return {
      format: FORMAT,
      v: 1,
      public_key_hex: pin ? pin.public_key_hex : null,
      commitments: records.commitments,
      actions: records.actions,
    };
  }

  // ---- comparing a bundle with the records --------------------------------------------------

  function short(hex) {
    return typeof hex === "string" ? hex.slice(0, 16) + "…" : String(hex);
  }

  function cardsText(cards) {
    return Array.isArray(cards) ? cards.join(" ") : JSON.stringify(cards);
  }

  /* What the records say about one bundle: {commitment: true/false/null (no record),
   * rounds: {round_id: {ok, recorded}}, problems: [...]} — each problem names what differs. */
  function compareBundle(bundle) {
    const records = stored();
    const problems = [];
    const pairDoc = bundle.commitment && bundle.commitment.document;
    const pairId = pairDoc && pairDoc.seed_pair_id;
    const shown = records.commitments.filter((c) => c.document && c.document.seed_pair_id === pairId);
    let commitment = null;
    if (shown.length) {
      const differing = shown.filter((c) => canonical(c.document) !== canonical(pairDoc));
      commitment = differing.length === 0;
      for (const c of differing) {
        const what = c.document.commitment !== pairDoc.commitment
          ? gettext("commitment %(shown)s, the bundle's is %(bundled)s", { shown: short(c.document.commitment), bundled: short(pairDoc.commitment) })
          : gettext("a different commitment document (%(document)s)", { document: canonical(c.document) });
        problems.push(gettext("seed pair #%(pair)s was re-committed: before play you were shown %(what)s", { pair: pairId, what }));
      }
    }
    const rounds = {};
    const inBundle = new Set();
    for (const signed of bundle.rounds || []) {
      const doc = signed.document;
      inBundle.add(doc.round_id);
      const mine = records.actions.filter((a) => a.round_id === doc.round_id);
      if (!mine.length) continue;
      const differences = [];
      for (const a of mine) {
        if (a.seed_pair_id !== null && a.seed_pair_id !== doc.seed_pair_id) {
          differences.push(gettext("you played it on seed pair #%(yours)s, the receipt says #%(signed)s", { yours: a.seed_pair_id, signed: doc.seed_pair_id }));
        }
        if (a.nonce !== null && a.nonce !== doc.nonce) {
          differences.push(gettext("you played it at nonce %(yours)s, the receipt says %(signed)s", { yours: a.nonce, signed: doc.nonce }));
        }
        if (a.game !== doc.game) {
          differences.push(gettext("you played %(yours)s, the receipt says %(signed)s", { yours: a.game, signed: doc.game }));
        } else if (a.game === "casino_war") {
          const signedChoice = (doc.actions || [])[0];
          if (signedChoice !== a.action) {
            differences.push(gettext("you chose %(yours)s, the receipt says %(signed)s",
              { yours: a.action, signed: signedChoice === undefined ? gettext("no decision") : signedChoice }));
          }
        } else {
          const signedMove = (doc.actions || [])[a.move];
          if (canonical(signedMove) !== canonical(a.cards)) {
            differences.push(gettext("your move %(move)s laid %(yours)s, the receipt says %(signed)s", {
              move: a.move + 1, yours: cardsText(a.cards),
              signed: signedMove === undefined ? gettext("no such move") : cardsText(signedMove) }));
          }
        }
      }
      rounds[doc.round_id] = { ok: differences.length === 0, recorded: mine.length };
      for (const d of differences) problems.push(gettext("round %(round)s: %(problem)s", { round: doc.round_id, problem: d }));
    }
    for (const a of records.actions) {
      if (a.seed_pair_id === pairId && !inBundle.has(a.round_id)) {
        problems.push(gettext("round %(round)s, which you played on seed pair #%(pair)s, is missing from the bundle", { round: a.round_id, pair: pairId }));
        inBundle.add(a.round_id);
      }
    }
    return { commitment, rounds, problems, recordedActions: Object.keys(rounds).length };
  }

  // ---- the page -------------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  function showPins() {
    const pin = pinnedKey();
    for (const slot of document.querySelectorAll("[data-pinned-key]")) {
      if (pin) slot.textContent = pin.public_key_hex;
    }
    for (const slot of document.querySelectorAll("[data-pinned-at]")) {
      slot.textContent = pin ? gettext("pinned since %(when)s", { when: pin.pinned_at })
        : gettext("not pinned (this browser keeps no storage for this site)");
    }
  }

  /* Pin the key a page shows, or warn loudly when it is not the pinned one. */
  function checkShownKeys() {
    for (const node of document.querySelectorAll("[data-service-public-key]")) {
      const shown = node.getAttribute("data-service-public-key");
      const pin = pinFirstSeen(shown);
      if (!pin || pin.public_key_hex === shown) continue;
      const accept = el("button", { type: "button", "data-accept-key": shown }, gettext("Trust the new key"));
      const warning = el("div", { class: "flash bad key-changed", role: "alert", "data-testid": "key-changed" },
        el("strong", {}, gettext("⚠ The casino's signing key has changed.") + " "),
        gettext("This browser pinned the key %(pinned)s on %(when)s, but this page shows %(shown)s. Nothing is verified against the new key unless you trust it. Trust it only if the casino announced the change somewhere you trust; otherwise its signatures prove nothing.",
          { pinned: pin.public_key_hex, when: pin.pinned_at, shown }) + " ",
        accept);
      accept.addEventListener("click", () => {
        acceptKey(shown);
        warning.replaceWith(el("p", { class: "flash info", role: "status" }, gettext("This browser now trusts the key %(key)s.", { key: shown })));
        showPins();
      });
      const main = document.getElementById("main") || document.body;
      main.prepend(warning);
      return; // one warning per page
    }
  }

  function recordShownCommitments() {
    for (const node of document.querySelectorAll('script[type="application/json"][data-signed-commitment]')) {
      try {
        recordCommitment(JSON.parse(node.textContent));
      } catch (error) {
        // a damaged element records nothing
      }
    }
  }

  function recordFormAction(form, submitter) {
    const data = form.dataset;
    const base = { round_id: data.roundId, seed_pair_id: data.seedPairId, nonce: data.nonce, game: data.game };
    if (data.game === "casino_war") {
      const choice = submitter && submitter.value ? submitter.value : (new FormData(form)).get("choice");
      return recordAction({ ...base, action: choice });
    }
    const fields = new FormData(form);
    const up = fields.get("up");
    const cards = fields.getAll("down").filter((card) => card !== up).concat(up ? [up] : []);
    return recordAction({ ...base, move: data.move, cards });
  }

  function offerExport() {
    for (const button of document.querySelectorAll("[data-export-records]")) {
      button.addEventListener("click", () => {
        const blob = new Blob([JSON.stringify(exportDocument(), null, 1) + "\n"], { type: "application/json" });
        const link = el("a", { href: URL.createObjectURL(blob), download: "sota-casino-records.json" });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(link.href), 1000);
      });
    }
    for (const node of document.querySelectorAll("[data-records-summary]")) {
      const records = stored();
      node.textContent = ngettext("%(num)s commitment", "%(num)s commitments", records.commitments.length) + " · "
        + ngettext("%(num)s decision or move recorded in this browser.", "%(num)s decisions or moves recorded in this browser.", records.actions.length);
    }
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-record-action")) return;
    try {
      recordFormAction(form, event.submitter);
    } catch (error) {
      // an incomplete form is refused by the server; there is nothing to record
    }
  }, true);

  document.addEventListener("DOMContentLoaded", () => {
    checkShownKeys();
    showPins();
    recordShownCommitments();
    offerExport();
  });

  window.SotaRecords = {
    pinnedKey, pinFirstSeen, acceptKey, recordCommitment, recordAction, exportDocument, compareBundle, canonical,
  };
})();
