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
    win: gettext("You win"), lose: gettext("Dealer wins"), surrender: gettext("You surrendered"),
    war_win: gettext("You won the war"), war_tie: gettext("War tied: you win"),
    war_lose: gettext("Dealer won the war"),
  };
  const nodes = window.SotaI18n.nodes;

  function $(id) { return document.getElementById(id); }

  const { chips, chipCount, chipsText, chipsBackText } = window.SotaI18n;

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
        "Accept-Language": window.SotaI18n.locale(),
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

    /* Warn before the bet is placed when a tie could only be surrendered; not for a bet outside
     * the table's limits, which cannot be placed (the field's own check says why). */
    function checkAfford() {
      const note = $("afford");
      const bet = whole(ante);
      const tieBet = whole(tie) || 0;
      const low = Number(table.dataset.minBet) / 100;
      const high = Number(table.dataset.maxBet) / 100;
      const placeable = (amount) => amount >= low && amount <= high;
      let text = "";
      if (bet && placeable(bet) && (tieBet === 0 || placeable(tieBet))) {
        const left = held - (bet + tieBet) * 100;
        if (left >= 0 && left < bet * 100) {
          text = gettext("After this bet you would have %(left)s left: on a tie you could not raise %(raise)s to go to war, only surrender and get %(back)s back.",
            { left: chipsText(left), raise: chips(bet * 100), back: chips(Math.floor(bet * 100 / 2)) });
        }
      }
      note.textContent = text;
      note.hidden = !text;
    }

    /* Show the refusal above the form; `field` ("bet", "tie_bet", or "*" for both) marks the
     * field it is about as the server's page does, focused and on the screen (refusals.js). */
    function showError(message, field) {
      let box = $("form-error");
      if (!box) {
        box = el("p", { class: "flash error", role: "alert", id: "form-error" });
        form.before(box);
      }
      box.textContent = message;
      box.hidden = !message;
      for (const input of [ante, tie]) {
        if (input && window.SotaRefusals) {
          window.SotaRefusals.mark(input, Boolean(message) && (field === "*" || field === input.name));
        }
      }
      const wrong = message && field ? form.querySelector("[aria-invalid=true]") : null;
      if (wrong && window.SotaRefusals) window.SotaRefusals.show(wrong);
    }

    function setBalances(balances) {
      held = balances.chips;
      table.dataset.balance = String(held);
      window.SotaI18n.showBalance("chips", held);
      window.SotaI18n.showBalance("sweets", balances.sweets);
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
        gettext("Go to war · raise %(amount)s", { amount: chips(round.bet) }) + " ");
      const surrender = el("button", { type: "submit", name: "choice", value: "surrender", id: "surrender" },
        gettext("Surrender · get %(amount)s back", { amount: half }) + " ");
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
          text: gettext("War needs %(needed)s; you have %(have)s.", { needed: chipsText(round.bet), have: chips(round.balances.chips) }) }));
      }
      decision.addEventListener("submit", decide);
      return decision;
    }

    /* The cards of the round in words, for the live region to say with its result (the cards
     * themselves are drawn outside it): the same sentences as the template's. */
    function cardsSaid(round) {
      const name = window.SotaCards.name;
      const said = el("p", { class: "visually-hidden", "data-testid": "cards-said",
        text: gettext("The dealer's card: %(dealer)s; yours: %(player)s.", { dealer: name(round.dealer_card), player: name(round.player_card) }) });
      if (round.war) {
        said.append(" " + gettext("In the war, the dealer's card: %(dealer)s; yours: %(player)s.",
          { dealer: name(round.war.dealer_card), player: name(round.war.player_card) }));
      }
      return said;
    }

    function outcome(round) {
      const box = $("outcome");
      box.replaceChildren();
      if (round.status === "awaiting_decision") {
        const canRaise = round.balances.chips >= round.bet;
        const banner = el("div", { class: "result-banner", role: "status", "data-testid": "tie" },
          el("div", { class: "headline", text: gettext("A tie!") }), cardsSaid(round));
        if (round.tie_bet) {
          const won = el("p", { "data-testid": "tie-bet-result" }, ...nodes(gettext("Your tie bet of %(bet)s won <strong>%(won)s</strong>, paid when the round settles.").replace(/<\/?strong>/g, ""),
            { bet: chips(round.tie_bet), won: el("strong", { text: chipsText(round.tie_bet * tiePayout) }) }));
          banner.append(won);
        }
        const half = chipsBackText(Math.floor(round.bet / 2));
        const amounts = { raise: el("strong", { text: chipsText(round.bet) }), back: el("strong", { text: half }),
          have: chips(round.balances.chips) };
        // The page's own sentences (the same ids as the template's), their <strong> drawn here.
        if (canRaise) {
          banner.append(el("p", {}, ...nodes(plain(gettext("Go to war by raising <strong>%(raise)s</strong> (equal to your ante), or surrender and get <strong>%(back)s</strong>.")), amounts)));
        } else {
          banner.append(el("p", { "data-testid": "cannot-raise" }, ...nodes(plain(gettext("Going to war needs a raise of <strong>%(raise)s</strong>, and you have %(have)s: surrender and get <strong>%(back)s</strong>.")), amounts)));
        }
        box.append(banner, decisionForm(round, canRaise));
        return;
      }
      const good = round.net >= 0;
      const netClass = round.net > 0 ? "pos" : (round.net < 0 ? "neg" : "");
      const banner = el("div", { class: "result-banner " + (good ? "win" : "lose"), role: "status", "data-testid": "result" },
        el("div", { class: "headline", text: OUTCOMES[round.outcome] || round.outcome }), cardsSaid(round),
        el("p", { class: "net" }, ...nodes(plain(ngettext("Net %(net)s chip", "Net %(net)s chips", chipCount(round.net))),
          { net: el("strong", { class: netClass, "data-testid": "net", text: chips(round.net, true) }) }),
          " · " + gettext("paid back %(amount)s", { amount: chipsText(round.payout) })));
      if (round.tie_bet) {
        banner.append(el("p", { "data-testid": "tie-bet-result",
          text: round.tie_bet_won
            ? gettext("Tie bet %(bet)s: won %(won)s!", { bet: chips(round.tie_bet), won: chipsText(round.tie_bet * tiePayout) })
            : gettext("Tie bet %(bet)s: lost.", { bet: chips(round.tie_bet) }) }));
      }
      banner.append(el("p", {}, ...nodes(plain(ngettext("Balance now %(balance)s chip", "Balance now %(balance)s chips", chipCount(round.balances.chips))),
        { balance: el("strong", { "data-testid": "new-balance", text: chips(round.balances.chips) }) }),
        " · ", el("a", { href: table.dataset.receiptUrl.replace(/\/0$/, "/" + round.id), text: gettext("receipt") })));
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
      summary.replaceChildren(el("span", { text: gettext("Ante %(amount)s", { amount: chips(round.bet) }) }));
      if (round.tie_bet) summary.append(el("span", { text: gettext("Tie bet %(amount)s", { amount: chips(round.tie_bet) }) }));
      if (round.raise) summary.append(el("span", { text: gettext("Raise %(amount)s", { amount: chips(round.raise) }) }));
      summary.append(el("span", { text: gettext("Round #%(id)s · nonce %(nonce)s", { id: round.id, nonce: round.nonce }) }));
      setBalances(round.balances);
      const awaiting = round.status === "awaiting_decision";
      form.hidden = awaiting;
      $("decide-first").hidden = !awaiting;
      const rebet = $("rebet");
      rebet.hidden = awaiting || !lastBet;
      if (lastBet) {
        $("rebet-amount").textContent = lastBet.bet + (lastBet.tie_bet ? " + " + gettext("tie %(amount)s", { amount: lastBet.tie_bet }) : "");
      }
      checkAfford();
      if (awaiting) {
        const first = document.querySelector("#decision button.primary");
        if (first) first.focus({ preventScroll: true });
      } else {
        // Disabled while the deal was answered, the button is enabled before it takes the
        // focus back: a disabled one cannot, and the focus went to the page's body.
        const deal = $("deal");
        deal.disabled = false;
        deal.focus({ preventScroll: true });
      }
    }

    /* This page's rules are not the table's any more, so every bet it sends is refused: the
     * refusal leads to the table drawn anew with the new rules, for the player to read before
     * betting (nothing is bet under them from here, unseen). */
    function offerNewRules() {
      const link = el("a", { class: "button primary", id: "new-rules", href: table.dataset.tableUrl,
        text: gettext("Show the new rules") });
      $("form-error").append(" ", link);
      link.focus();
    }

    /* The API's refusal in the words the table's form uses (the API's own words name fields). */
    function refused(answer, needed, short) {
      const error = answer.data && answer.data.error;
      if (!error) return gettext("The table did not answer (status %(status)s). Try again.", { status: answer.status });
      if (error.code === "insufficient_funds") {
        return short.replace(/%\((\w+)\)s/g, (whole, name) => ({
          held: chipsText(held), needed: chipsText(needed), low: chipsText(Number(table.dataset.lowBalance)),
        })[name] || whole);
      }
      if (error.code === "rules_changed") { // the API's words name the options by their codes
        return gettext("The table's rules changed since this page was shown, so your bet was not placed: look at the new rules before you bet.");
      }
      if (error.code === "invalid_bet" || error.code === "invalid_input") {
        const low = Number(table.dataset.minBet);
        const high = Number(table.dataset.maxBet);
        const limits = { low: chips(low), high: chips(high), amount: chipsText(low) };
        const one = low === high; // a table of one amount names it, not a range (casino_war.py)
        const field = error.field || "";
        if (/tie_bet/.test(error.message) || field === "tie_bet") {
          if (!tiePayout) return gettext("This table offers no tie bet; leave it at 0.");
          return one
            ? gettext("The tie bet must be 0 or %(amount)s.", limits)
            : gettext("The tie bet must be 0 or from %(low)s to %(high)s whole chips.", limits);
        }
        if (/^bet\b/.test(error.message)) {
          return one
            ? gettext("The ante must be %(amount)s.", limits)
            : gettext("The ante must be from %(low)s to %(high)s whole chips.", limits);
        }
      }
      return sentence(error.message);
    }

    /* The bet field a refusal is about (the API names it: `error.field`): "bet", "tie_bet", "*"
     * (both: more than the balance), or null (about neither: the table's rules changed, no
     * answer came). */
    function refusedField(answer) {
      const error = answer.data && answer.data.error;
      if (!error) return null;
      if (error.code === "insufficient_funds") return "*";
      return error.field === "bet" || error.field === "tie_bet" ? error.field : null;
    }

    /* A sentence of the page's template without its markup: the script draws the <strong>. */
    function plain(text) {
      return text.replace(/<\/?strong>/g, "");
    }

    async function deal(bet, tieBet) {
      if (busy) return;
      if (bet === null || tieBet === null || !bet) {
        showError(bet === null || tieBet === null
          ? gettext("Bets are whole numbers of chips, like 5 or 25.")
          : gettext("Please enter the ante in chips."), !bet ? "bet" : "tie_bet");
        return;
      }
      busy = true;
      $("deal").disabled = true;
      try {
        // The rules this page shows: the table refuses the bet if its rules changed since.
        const sent = { bet: bet * 100, tie_bet: tieBet * 100, rules: JSON.parse(form.elements.rules.value) };
        // With a key, the bet is signed for the nonce it takes; if another bet (another tab)
        // took that nonce first, it is signed again for the next one, once.
        let answer = null;
        for (let attempt = 0; attempt < 2; attempt += 1) {
          let signed;
          try {
            signed = window.SotaPlayerKey ? await window.SotaPlayerKey.signBet({
              game: "casino_war", stakes: { bet: sent.bet, tie_bet: sent.tie_bet }, rules: sent.rules,
            }) : {};
          } catch (error) {
            showError(String(error.message || error));
            return;
          }
          answer = await post(table.dataset.api, { ...sent, ...signed }, key());
          const refusal = !answer.ok && answer.data && answer.data.error;
          if (!(refusal && refusal.code === "nonce_not_next" && "nonce" in signed)) break;
        }
        if (!answer.ok) {
          const code = answer.data && answer.data.error && answer.data.error.code;
          if (code === "insufficient_funds") await refreshBalance();
          showError(refused(answer, (bet + tieBet) * 100, gettext("You have %(held)s, not enough for this bet of %(needed)s. Bet less, or top up in the lobby once you are below %(low)s.")),
            refusedField(answer));
          if (code === "rules_changed") offerNewRules();
          return;
        }
        try {
          const round = answer.data;
          window.SotaRecords.recordBet({ round_id: round.id, seed_pair_id: round.seed_pair_id, nonce: round.nonce, game: "casino_war", ...sent });
        } catch (error) { /* not recorded: the round stands as dealt */ }
        showError("");
        lastBet = { bet, tie_bet: tieBet };
        for (const input of [ante, tie]) if (input) input.dataset.prefilled = "1";
        render(answer.data);
      } catch (error) {
        showError(gettext("The table could not be reached. Check your connection and deal again."));
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

    /* Enable the choices again after a decision that was not made (war stays off where the
     * raise cannot be paid), and give the focus back to the one pressed: disabled while it was
     * sent, it had lost the focus to the page's body. */
    function reopen(decision, submitter) {
      for (const b of decision.querySelectorAll("button")) b.disabled = b.id === "go-to-war" && Boolean($("war-why"));
      const back = submitter.disabled ? decision.querySelector("button:not([disabled])") : submitter;
      if (back) back.focus({ preventScroll: true });
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
          reopen(decision, submitter);
          return;
        }
        const answer = await post(table.dataset.api + "/" + roundId + "/decision", { choice, ...signed }, key());
        if (!answer.ok) {
          showError(refused(answer, Number(decision.dataset.ante), gettext("You have %(held)s, not enough for the raise of %(needed)s. Surrender instead, or top up in the lobby once you are below %(low)s.")));
          reopen(decision, submitter);
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
        showError(gettext("The table could not be reached. Check your connection and decide again."));
        reopen(decision, submitter);
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
