/* Casino War table: deal, decide and rebet through the JSON API without reloading the page.
 *
 * The page's forms work without this script (each deal is then a page load). With it, the bet
 * form and the decision form are sent with fetch (the session cookie plus the page's CSRF token
 * in X-CSRF-Token) and the answer redraws the cards, the result and the balances in place.
 *
 * Keys (when not typing in a field): D deal, R rebet, W go to war, S surrender, 1–5 add a chip,
 * C clear the bet, T switch the chips between the ante and the tie bet.
 */
"use strict";

(function () {
  const OUTCOMES = {
    win: "You win", lose: "Dealer wins", surrender: "You surrendered", war_win: "You won the war",
    war_tie: "War tied: you win", war_lose: "Dealer won the war",
  };

  function $(id) { return document.getElementById(id); }

  /* Hundredths of a chip as the page shows them: 150 → "1.50", 120000 → "1,200", −500 → "−5". */
  function chips(amount, signed) {
    const sign = amount < 0 ? "−" : (signed && amount > 0 ? "+" : "");
    const whole = Math.floor(Math.abs(amount) / 100);
    const cents = Math.abs(amount) % 100;
    const text = whole.toLocaleString("en-US") + (cents ? "." + String(cents).padStart(2, "0") : "");
    return sign + text;
  }

  function chipsText(amount, signed) {
    return chips(amount, signed) + (Math.abs(amount) === 100 ? " chip" : " chips");
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === false || value === null || value === undefined) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : value);
    }
    node.append(...children);
    return node;
  }

  function key() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function post(url, body, idempotencyKey) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "X-CSRF-Token": document.querySelector("meta[name=csrf-token]").content,
        "Idempotency-Key": idempotencyKey,
      },
      body: JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (error) { data = null; }
    return { ok: response.ok, status: response.status, data };
  }

  function setup() {
    const table = $("war-table");
    const form = $("bet-form");
    if (!table || !form) return;
    const ante = $("bet");
    const tie = $("tie_bet");
    const tiePayout = Number(table.dataset.tiePayout);
    let held = Number(table.dataset.balance);
    let lastBet = null; // {bet, tie_bet} in whole chips, once a round was dealt from this page
    let busy = false;

    /* The bet fields start filled (the last round's bet, or a first suggestion): the first chip
     * starts a new bet; after the player typed or added chips, chips add to what the field shows. */
    for (const input of [ante, tie]) if (input) input.dataset.prefilled = "1";

    function target() {
      const tieTarget = $("chips-to-tie");
      return tieTarget && tieTarget.checked ? tie : ante;
    }

    function addChips(amount) {
      const input = target();
      if (!input) return;
      const current = input.dataset.prefilled ? 0 : (parseInt(input.value, 10) || 0);
      delete input.dataset.prefilled;
      const max = parseInt(input.max, 10) || Infinity;
      input.value = String(Math.min(current + amount, max));
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }

    function clearBet() {
      ante.value = "";
      delete ante.dataset.prefilled;
      if (tie) { tie.value = "0"; delete tie.dataset.prefilled; }
      checkAfford();
    }

    function whole(input) {
      if (!input) return 0;
      const text = input.value.trim();
      return /^[0-9]{1,12}$/.test(text) ? Number(text) : null;
    }

    /* Warn before the bet is placed when a tie could only be surrendered. */
    function checkAfford() {
      const note = $("afford");
      const bet = whole(ante);
      const tieBet = whole(tie) || 0;
      let text = "";
      if (bet) {
        const left = held - (bet + tieBet) * 100;
        if (left >= 0 && left < bet * 100) {
          text = "After this bet you would have " + chipsText(left) + " left: on a tie you could not raise " +
            chips(bet * 100) + " to go to war, only surrender and get " + chips(Math.floor(bet * 100 / 2)) + " back.";
        }
      }
      note.textContent = text;
      note.hidden = !text;
    }

    function showError(message) {
      let box = $("form-error");
      if (!box) {
        box = el("p", { class: "flash error", role: "alert", id: "form-error" });
        form.before(box);
      }
      box.textContent = message;
      box.hidden = !message;
    }

    function setBalances(balances) {
      held = balances.chips;
      table.dataset.balance = String(held);
      for (const node of document.querySelectorAll("[data-testid=chips-balance] strong, [data-header-chips]")) {
        node.textContent = chips(held);
      }
      for (const node of document.querySelectorAll("[data-header-sweets], [data-testid=sweets-balance] strong")) {
        node.textContent = Number(balances.sweets).toLocaleString("en-US");
      }
    }

    function place(id, code, extra) {
      const spot = $(id);
      spot.replaceChildren();
      if (code) spot.append(window.SotaCards.card(code, extra || "dealt"));
    }

    function decisionForm(round, canRaise) {
      const half = chips(Math.floor(round.bet / 2));
      const decision = el("form", {
        method: "post", action: table.dataset.decisionUrl.replace("/0/", "/" + round.id + "/"),
        class: "decision", id: "decision", "data-record-action": true, "data-round-id": round.id,
        "data-seed-pair-id": round.seed_pair_id, "data-nonce": round.nonce, "data-game": "casino_war",
        "data-ante": round.bet,
      });
      const war = el("button", { type: "submit", name: "choice", value: "war", id: "go-to-war" },
        "Go to war · raise " + chips(round.bet) + " ");
      const surrender = el("button", { type: "submit", name: "choice", value: "surrender", id: "surrender" },
        "Surrender · get " + half + " back ");
      war.append(el("kbd", { text: "W" }));
      surrender.append(el("kbd", { text: "S" }));
      if (canRaise) {
        war.className = "primary";
        decision.append(war, surrender);
      } else {
        surrender.className = "primary";
        war.disabled = true;
        war.setAttribute("aria-describedby", "war-why");
        decision.append(surrender, war, el("small", { class: "hint", id: "war-why",
          text: "War needs " + chips(round.bet) + " chips; you have " + chips(round.balances.chips) + "." }));
      }
      decision.addEventListener("submit", decide);
      return decision;
    }

    function outcome(round) {
      const box = $("outcome");
      box.replaceChildren();
      if (round.status === "awaiting_decision") {
        const canRaise = round.balances.chips >= round.bet;
        const banner = el("div", { class: "result-banner", role: "status", "data-testid": "tie" },
          el("div", { class: "headline", text: "A tie!" }));
        if (round.tie_bet) {
          const won = el("p", { "data-testid": "tie-bet-result" }, "Your tie bet of " + chips(round.tie_bet) + " won ",
            el("strong", { text: chips(round.tie_bet * tiePayout) + " chips" }), ", paid when the round settles.");
          banner.append(won);
        }
        const half = chips(Math.floor(round.bet / 2)) + " chips";
        if (canRaise) {
          banner.append(el("p", {}, "Go to war by raising ", el("strong", { text: chips(round.bet) + " chips" }),
            " (equal to your ante), or surrender and get ", el("strong", { text: half }), " back."));
        } else {
          banner.append(el("p", { "data-testid": "cannot-raise" }, "Going to war needs a raise of ",
            el("strong", { text: chips(round.bet) + " chips" }), ", and you have " + chips(round.balances.chips) +
            ": surrender and get ", el("strong", { text: half }), " back."));
        }
        box.append(banner, decisionForm(round, canRaise));
        return;
      }
      const good = round.net >= 0;
      const netClass = round.net > 0 ? "pos" : (round.net < 0 ? "neg" : "");
      const banner = el("div", { class: "result-banner " + (good ? "win" : "lose"), role: "status", "data-testid": "result" },
        el("div", { class: "headline", text: OUTCOMES[round.outcome] || round.outcome }),
        el("p", { class: "net" }, "Net ", el("strong", { class: netClass, "data-testid": "net", text: chips(round.net, true) }),
          " chips · paid back " + chips(round.payout)));
      if (round.tie_bet) {
        banner.append(el("p", { "data-testid": "tie-bet-result",
          text: "Tie bet " + chips(round.tie_bet) + ": " + (round.tie_bet_won ? "won " + chips(round.tie_bet * tiePayout) + "!" : "lost.") }));
      }
      banner.append(el("p", {}, "Balance now ", el("strong", { "data-testid": "new-balance", text: chips(round.balances.chips) }),
        " chips · ", el("a", { href: table.dataset.receiptUrl.replace(/\/0$/, "/" + round.id), text: "receipt" })));
      box.append(banner);
    }

    function render(round) {
      place("dealer-card", round.dealer_card);
      place("player-card", round.player_card);
      const war = round.war;
      $("war-zone").hidden = !war;
      place("dealer-war-card", war && war.dealer_card);
      place("player-war-card", war && war.player_card);
      $("burned").replaceChildren(...(war ? war.burned.map((c) => window.SotaCards.card(c, "mini")) : []));
      outcome(round);
      const summary = $("bet-summary");
      summary.replaceChildren(el("span", { text: "Ante " + chips(round.bet) }));
      if (round.tie_bet) summary.append(el("span", { text: "Tie bet " + chips(round.tie_bet) }));
      if (round.raise) summary.append(el("span", { text: "Raise " + chips(round.raise) }));
      summary.append(el("span", { text: "Round #" + round.id + " · nonce " + round.nonce }));
      setBalances(round.balances);
      const awaiting = round.status === "awaiting_decision";
      form.hidden = awaiting;
      $("decide-first").hidden = !awaiting;
      const rebet = $("rebet");
      rebet.hidden = awaiting || !lastBet;
      if (lastBet) {
        $("rebet-amount").textContent = lastBet.bet + (lastBet.tie_bet ? " + tie " + lastBet.tie_bet : "");
      }
      checkAfford();
      if (awaiting) {
        const first = document.querySelector("#decision button.primary");
        if (first) first.focus({ preventScroll: true });
      } else {
        $("deal").focus({ preventScroll: true });
      }
    }

    /* The API's refusal in the words the table's form uses (the API's own words name fields). */
    function refused(answer, needed, what, instead) {
      const error = answer.data && answer.data.error;
      if (!error) return "The table did not answer (status " + answer.status + "). Try again.";
      if (error.code === "insufficient_funds") {
        return "You have " + chipsText(held) + ", not enough for " + what + " of " + chipsText(needed) + ". " +
          instead + ", or top up in the lobby once you are below " + chipsText(Number(table.dataset.lowBalance)) + ".";
      }
      if (error.code === "invalid_bet" || error.code === "invalid_input") {
        const limits = "from " + chips(Number(table.dataset.minBet)) + " to " + chips(Number(table.dataset.maxBet)) + " whole chips";
        if (/tie_bet/.test(error.message)) {
          return tiePayout ? "The tie bet must be 0 or " + limits + "." : "This table offers no tie bet; leave it at 0.";
        }
        if (/^bet\b/.test(error.message)) return "The ante must be " + limits + ".";
      }
      return sentence(error.message);
    }

    async function deal(bet, tieBet) {
      if (busy) return;
      if (bet === null || tieBet === null || !bet) {
        showError(bet === null || tieBet === null
          ? "Bets are whole numbers of chips, like 5 or 25."
          : "Please enter the ante in chips.");
        return;
      }
      busy = true;
      $("deal").disabled = true;
      try {
        const answer = await post(table.dataset.api, { bet: bet * 100, tie_bet: tieBet * 100 }, key());
        if (!answer.ok) {
          if (answer.data && answer.data.error && answer.data.error.code === "insufficient_funds") await refreshBalance();
          showError(refused(answer, (bet + tieBet) * 100, "this bet", "Bet less"));
          return;
        }
        showError("");
        lastBet = { bet, tie_bet: tieBet };
        for (const input of [ante, tie]) if (input) input.dataset.prefilled = "1";
        render(answer.data);
      } catch (error) {
        showError("The table could not be reached. Check your connection and deal again.");
      } finally {
        busy = false;
        $("deal").disabled = false;
      }
    }

    async function refreshBalance() {
      try {
        const me = await fetch("/api/v1/me", { credentials: "same-origin" });
        if (me.ok) setBalances((await me.json()).balances);
      } catch (error) { /* the old balance stays shown */ }
    }

    function sentence(text) {
      return text ? text[0].toUpperCase() + text.slice(1) : text;
    }

    async function decide(event) {
      event.preventDefault();
      if (busy) return;
      const decision = event.currentTarget;
      const submitter = event.submitter || decision.querySelector("button.primary");
      const choice = submitter.value;
      const roundId = Number(decision.dataset.roundId);
      busy = true;
      for (const b of decision.querySelectorAll("button")) b.disabled = true;
      try {
        let signed;
        try {
          signed = window.SotaPlayerKey ? await window.SotaPlayerKey.signAction({
            game: "casino_war", round_id: roundId, seed_pair_id: Number(decision.dataset.seedPairId),
            nonce: Number(decision.dataset.nonce), index: 0, choice,
          }) : {};
        } catch (error) {
          showError(String(error.message || error));
          for (const b of decision.querySelectorAll("button")) b.disabled = false;
          return;
        }
        const answer = await post(table.dataset.api + "/" + roundId + "/decision", { choice, ...signed }, key());
        if (!answer.ok) {
          showError(refused(answer, Number(decision.dataset.ante), "the raise", "Surrender instead"));
          for (const b of decision.querySelectorAll("button")) b.disabled = b.id === "go-to-war" && Boolean($("war-why"));
          return;
        }
        if (window.SotaRecords) {
          window.SotaRecords.recordAction({
            round_id: roundId, seed_pair_id: Number(decision.dataset.seedPairId),
            nonce: Number(decision.dataset.nonce), game: "casino_war", action: choice,
          });
        }
        showError("");
        render(answer.data);
      } catch (error) {
        showError("The table could not be reached. Check your connection and decide again.");
        for (const b of decision.querySelectorAll("button")) b.disabled = false;
      } finally {
        busy = false;
      }
    }

    form.addEventListener("submit", (event) => {
      if (!form.checkValidity()) return; // the browser says what is wrong with the field
      event.preventDefault();
      deal(whole(ante), tie ? whole(tie) : 0);
    });
    const existing = $("decision");
    if (existing) existing.addEventListener("submit", decide);

    $("rebet").addEventListener("click", () => {
      if (!lastBet) return;
      ante.value = String(lastBet.bet);
      if (tie) tie.value = String(lastBet.tie_bet);
      deal(lastBet.bet, lastBet.tie_bet);
    });
    for (const chip of document.querySelectorAll("button[data-chips]")) {
      chip.addEventListener("click", () => addChips(parseInt(chip.dataset.chips, 10)));
    }
    $("clear-bet").addEventListener("click", clearBet);
    for (const input of [ante, tie]) {
      if (!input) continue;
      input.addEventListener("input", (event) => {
        if (event.isTrusted) delete input.dataset.prefilled;
        checkAfford();
      });
    }
    checkAfford();

    const chipKeys = Array.from(document.querySelectorAll("button[data-chips]"));
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
      const k = event.key.toLowerCase();
      let done = false;
      if (k === "w") done = click("#go-to-war");
      else if (k === "s") done = click("#surrender");
      else if (k === "d") done = !form.hidden && click("#deal");
      else if (k === "r") done = !form.hidden && click("#rebet");
      else if (k === "c") { clearBet(); done = true; }
      else if (k === "t") {
        const tieTarget = $("chips-to-tie");
        const anteTarget = $("chips-to-ante");
        if (tieTarget && anteTarget) { (tieTarget.checked ? anteTarget : tieTarget).checked = true; done = true; }
      } else if (/^[1-9]$/.test(k) && chipKeys[Number(k) - 1] && !form.hidden) {
        chipKeys[Number(k) - 1].click();
        done = true;
      }
      if (done) event.preventDefault();
    });
  }

  function click(selector) {
    const node = document.querySelector(selector);
    if (node && !node.disabled && !node.hidden) {
      node.focus();
      node.click();
      return true;
    }
    return false;
  }

  function typing(event) {
    const t = event.target;
    return t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" ||
      (t.tagName === "INPUT" && !["button", "submit", "radio", "checkbox"].includes(t.type)));
  }

  // Without the table (a page that only shows a round) the one-submit guard still helps.
  function guardForms() {
    for (const once of document.querySelectorAll("form[data-once]")) {
      once.addEventListener("submit", (event) => {
        if (event.defaultPrevented) return;
        // Later than the submit event: a disabled submitter would drop its name=value.
        setTimeout(() => { for (const b of once.querySelectorAll("button[type=submit]")) b.disabled = true; }, 0);
      });
    }
  }

  document.addEventListener("DOMContentLoaded", () => { setup(); guardForms(); });
})();
