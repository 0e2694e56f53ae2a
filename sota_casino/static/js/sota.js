/* Sota replay: animates a game's trick log (from the page's JSON data block) trick by trick.
 *
 * One frame per step of a trick (the first flip, then each war); the last step of a trick also
 * shows who took the pot and the new card counts. Controls: play/pause, step, back, start, end,
 * next war, speed and a slider over the tricks; keys Space, arrows, Home/End, N and +/-.
 * The deal animation lasts at most half a frame at every speed, so each card is fully shown.
 * At the end a summary: winner, tricks, wars, the longest war and the card counts as a chart.
 * Under Prisoners of War the player's moves are sent to the JSON API from the page.
 * A new game (from the table's form or "Deal again") is dealt through the JSON API too: the
 * game's view then replaces the page's content in place and the address becomes the game's.
 */
"use strict";

(function () {
  const NAMES = [gettext("You"), gettext("Dealer"), gettext("CPU %(num)s", { num: 1 }), gettext("CPU %(num)s", { num: 2 })];
  const nodes = window.SotaI18n.nodes;
  const number = window.SotaI18n.number;
  const DECK_SIZES = { standard52: 52, jokers54: 54, pjanitsa36: 36, piquet32: 32 };
  const RANK_VALUES = { 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, T: 10, J: 11, Q: 12, K: 13, A: 14, X: 15 };
  const BASE_DELAY = 900;
  const DEAL_TIME = 450; // the animation's length at 1× and slower, in ms
  const CHART_POINTS = 160;
  // The phone the stylesheet keeps the replay's dock on (casino.css, .replay-dock).
  const SHORT_UPRIGHT = "(max-width: 700px) and (max-height: 600px) and (orientation: portrait)";
  const SVG = "http://www.w3.org/2000/svg";

  function $(id) { return document.getElementById(id); }

  function seatName(seat) {
    return NAMES[seat] || gettext("Seat %(num)s", { num: seat });
  }

  /* Who took a trick's pot, a whole sentence for each seat (a language may say the dealer with
   * its article, which a seat's label does not give: "Dealeren tar potten"). */
  function potText(seat, wars) {
    if (seat === 0) {
      return wars
        ? ngettext("You take the pot after %(num)s war.", "You take the pot after %(num)s wars.", wars)
        : gettext("You take the pot.");
    }
    if (seat === 1) {
      return wars
        ? ngettext("The dealer takes the pot after %(num)s war.", "The dealer takes the pot after %(num)s wars.", wars)
        : gettext("The dealer takes the pot.");
    }
    const cpu = { cpu: seat - 1 };
    return wars
      ? ngettext("CPU %(cpu)s takes the pot after %(num)s war.", "CPU %(cpu)s takes the pot after %(num)s wars.", wars, cpu)
      : gettext("CPU %(cpu)s takes the pot.", cpu);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else node.setAttribute(name, value);
    }
    node.append(...children);
    return node;
  }

  function stepsOf(trick) {
    return trick.steps || [trick.laid.map((cards) => cards.length)];
  }

  /* The results the header holds back, by game id (the sweets each holds back), kept in the
   * browser until a replay shows them: so a game reloaded, or opened again from the history,
   * before its replay reached the end still holds its result back. */
  const HELD = "sota-held-results";
  const HELD_KEPT = 20; // the newest kept: a game never replayed to its end is dropped in time

  function heldResults() {
    try {
      const held = JSON.parse(window.localStorage.getItem(HELD) || "{}");
      return held && typeof held === "object" ? held : {};
    } catch (error) {
      return {};
    }
  }

  function keepHeld(held) {
    const ids = Object.keys(held).sort((a, b) => Number(a) - Number(b)).slice(-HELD_KEPT);
    try {
      window.localStorage.setItem(HELD, JSON.stringify(Object.fromEntries(ids.map((id) => [id, held[id]]))));
    } catch (error) { /* not kept: a reload then shows the balance after the game */ }
  }

  /* `dealtHere`: the game was dealt in the page just now, and its result is shown at its end;
   * `carried`: the sweets the game it replaced still held back (dealt again before its end). */
  function setup(dealtHere, carried = 0) {
    const data = $("game-data");
    if (!data) return;
    for (const part of document.querySelectorAll("[data-replay]")) part.hidden = false;
    let game = JSON.parse(data.textContent);
    const seats = game.seats;
    const deckSize = DECK_SIZES[game.rules.deck] || 52;
    const dealt = Math.floor(deckSize / seats);
    const initialCounts = Array.from({ length: seats }, () => dealt);

    let tricks = [];
    let frames = [];
    let trickEnd = [];
    let outAt = -1; // the trick after which the player has no cards left, -1 if never

    function build() {
      tricks = game.tricks || [];
      // Frames: [trickIndex, stepIndex]; frame 0 is the deal, before any trick.
      frames = [[-1, 0]];
      trickEnd = [0];
      tricks.forEach((trick, t) => {
        const steps = stepsOf(trick).length;
        for (let s = 0; s < steps; s++) frames.push([t, s]);
        trickEnd.push(frames.length - 1);
      });
      outAt = tricks.findIndex((trick) => trick.counts[0] === 0);
      if (outAt === tricks.length - 1) outAt = -1; // out at the very end: the result says it
      scrub.max = String(tricks.length);
    }

    const seatEls = Array.from(document.querySelectorAll("#seats .seat"));
    const seatBox = $("seats");
    const what = $("trick-what");
    const scrub = $("scrub");
    const trickNo = $("trick-no");
    const playBtn = $("play-pause");
    const speed = $("speed");
    let position = 0;
    let timer = null;
    /* A game dealt in the page is settled at once, and the ledger's balance in the header (the
     * game's page, fetched) holds its result: until the replay reaches its end, the header
     * shows the balance as the stake left it, the payout held back, and the payout of a game
     * dealt again before its own end too. The result's banner then says the new balance (the
     * header is no live region: a screen reader hears it once). A game reloaded or opened by
     * its address holds back what it held until a replay of it reached the end (HELD); once
     * its result was shown, it shows the ledger's balance. */
    const held = heldResults();
    let heldBack = 0;
    if (game.status === "settled") heldBack = dealtHere ? game.payout + carried : Number(held[game.id]) || 0;
    if (dealtHere && heldBack) {
      held[game.id] = heldBack;
      keepHeld(held);
    }

    function showBalance() {
      window.SotaI18n.showBalance("sweets", game.balances.sweets - heldBack);
    }

    function render() {
      const [t, s] = frames[position];
      const trick = t >= 0 ? tricks[t] : null;
      const steps = trick ? stepsOf(trick) : [];
      const last = trick ? s === steps.length - 1 : true;
      const before = t > 0 ? tricks[t - 1].counts : initialCounts;
      const counts = trick && last ? trick.counts : before;
      const inWar = new Set();
      if (trick && s > 0) steps[s].forEach((n, seat) => { if (n > 0) inWar.add(seat); });

      seatEls.forEach((seatEl, seat) => {
        const laid = seatEl.querySelector("[data-laid]");
        laid.replaceChildren();
        if (trick) {
          let offset = 0;
          for (let k = 0; k <= s; k++) {
            const n = steps[k][seat] || 0;
            const cards = trick.laid[seat].slice(offset, offset + n);
            offset += n;
            if (!cards.length) continue;
            const row = el("div", { class: "step" });
            cards.forEach((code, i) => {
              const faceDown = i < cards.length - 1;
              row.append(window.SotaCards.card(code, "small" + (k === s ? " dealt" : ""), faceDown));
            });
            laid.append(row);
          }
        }
        seatEl.querySelector("[data-count]").textContent = String(counts[seat]);
        seatEl.querySelector(".count-bar span").style.width = (100 * counts[seat] / deckSize).toFixed(1) + "%";
        seatEl.classList.toggle("won", Boolean(trick && last && trick.winner === seat));
        seatEl.classList.toggle("in-war", inWar.has(seat));
        seatEl.classList.toggle("out", counts[seat] === 0 && position > 0);
      });

      what.replaceChildren();
      // Said as shown, with the card each seat laid face up at this step (the last of its
      // cards laid now; a seat out of this step's war lays none) and, in a war, how many it
      // laid face down before it.
      const faceUp = [];
      if (trick) {
        steps[s].forEach((n, seat) => {
          if (!n) return;
          let offset = 0;
          for (let k = 0; k < s; k++) offset += steps[k][seat] || 0;
          const code = trick.laid[seat][offset + n - 1];
          if (!code) return;
          const laid = { seat: seatName(seat), card: window.SotaCards.name(code) };
          faceUp.push(n > 1
            ? ngettext("%(seat)s: %(card)s, after %(num)s card face down", "%(seat)s: %(card)s, after %(num)s cards face down", n - 1, laid)
            : gettext("%(seat)s: %(card)s", laid));
        });
      }
      if (!trick) {
        what.textContent = ngettext("The deck is dealt: %(num)s card each. Press play to watch the game.",
          "The deck is dealt: %(num)s cards each. Press play to watch the game.", dealt);
      } else {
        what.append(el("strong", { text: gettext("Trick %(num)s:", { num: t + 1 }) + " " }));
        if (s > 0) what.append(el("span", { class: "war-flag", text: s > 1 ? gettext("WAR ×%(num)s", { num: s }) : gettext("WAR!") }), " ");
        let text;
        if (!last) text = gettext("the top cards tie: war!");
        else if (trick.winner === null || trick.winner === undefined) text = gettext("nobody wins the war; its cards leave the game.");
        else text = potText(trick.winner, trick.wars);
        what.append(text);
      }
      const heard = Array.from(what.childNodes, (node) => node.textContent.trim());
      if (faceUp.length) heard.splice(heard.length - 1, 0, faceUp.join("; ") + ".");
      $("trick-said").textContent = heard.filter(Boolean).join(" ");
      const tricksShown = trick ? (last ? t + 1 : t) : 0;
      scrub.value = String(tricksShown);
      trickNo.textContent = tricksShown + " / " + tricks.length;
      const atEnd = position === frames.length - 1;
      if (atEnd && heldBack) {
        heldBack = 0;
        showBalance();
        const shown = heldResults();
        delete shown[game.id];
        keepHeld(shown);
      }
      const result = $("game-result");
      if (result) result.hidden = !atEnd;
      $("game-summary").hidden = !(atEnd && game.status === "settled");
      const out = outAt >= 0 && tricksShown > outAt && !atEnd && game.status === "settled";
      $("you-out").hidden = !out;
      if (out) $("you-out-text").textContent = gettext("You are out: your last card went at trick %(num)s.", { num: outAt + 1 });
    }

    function go(to) {
      const before = position;
      position = Math.max(0, Math.min(frames.length - 1, to));
      render();
      if (position === frames.length - 1) {
        pause();
        if (before !== position) revealResult();
      }
    }

    /* The game played to its end: its result, and Deal again under it, are brought onto the
     * screen (the least scroll that shows them; each one's scroll margin keeps Deal again, or
     * on a phone its bar at the screen's foot, clear of the result). They were below it, on a
     * phone even with no summary above them, and the player scrolled to play on. */
    function revealResult() {
      const result = $("game-result");
      if (!result || result.hidden || game.status !== "settled") return;
      const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      result.scrollIntoView({ block: "nearest", behavior: still ? "auto" : "smooth" });
    }

    function delay() {
      const [t, s] = frames[Math.min(position + 1, frames.length - 1)];
      const war = t >= 0 && s > 0;
      return (war ? 1.4 : 1) * BASE_DELAY / Number(speed.value);
    }

    /* The deal animation follows the speed: with the last card's delay (0.8 of it) it takes
     * at most 0.6 of the shortest frame, so every card is fully shown before the next one. */
    function pace() {
      const frame = BASE_DELAY / Number(speed.value);
      seatBox.style.setProperty("--deal-time", Math.round(Math.min(DEAL_TIME, frame / 3)) + "ms");
    }

    function tick() {
      go(position + 1);
      if (timer !== null) timer = setTimeout(tick, delay());
    }

    function showPlay(playing) {
      playBtn.replaceChildren(el("span", { class: "icon " + (playing ? "pause" : "play"), "aria-hidden": "true" }),
        el("span", { class: "play-word" }, playing ? gettext("Pause") : gettext("Play")));
      playBtn.setAttribute("aria-pressed", playing ? "true" : "false");
    }

    function play() {
      if (position === frames.length - 1) go(0);
      if (timer !== null) return;
      showPlay(true);
      timer = setTimeout(tick, 150);
    }

    function pause() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      showPlay(false);
    }

    function toggle() {
      if (timer === null) play();
      else pause();
    }

    function nextWar() {
      const next = frames.findIndex(([t, s], i) => i > position && s > 0);
      go(next < 0 ? frames.length - 1 : next);
    }

    function bumpSpeed(direction) {
      const i = speed.selectedIndex + direction;
      if (i >= 0 && i < speed.options.length) speed.selectedIndex = i;
      pace();
    }

    /* The summary at the end: who won, how long, the wars, and the card counts over time. */
    function summary() {
      const box = $("game-summary");
      box.replaceChildren();
      if (game.status !== "settled" || !tricks.length) return;
      const wars = tricks.reduce((sum, trick) => sum + (trick.wars || 0), 0);
      let longest = 0;
      let longestAt = -1;
      tricks.forEach((trick, t) => { if ((trick.wars || 0) > longest) { longest = trick.wars; longestAt = t; } });
      const facts = el("dl", { class: "facts" },
        el("dt", { text: gettext("Winner") }), el("dd", { "data-testid": "summary-winner", text: window.SotaI18n.sotaWinner(game.winner) }),
        el("dt", { text: gettext("Tricks") }), el("dd", { "data-testid": "summary-tricks", text: number(tricks.length) }),
        el("dt", { text: gettext("Wars") }), el("dd", { "data-testid": "summary-wars", text: number(wars) }),
        el("dt", { text: gettext("Longest war") }), el("dd", { "data-testid": "summary-longest",
          text: longest
            ? ngettext("%(num)s war at trick %(trick)s", "%(num)s wars in a row at trick %(trick)s", longest, { trick: longestAt + 1 })
            : gettext("no war") }));
      box.append(el("h2", { text: gettext("The game in numbers") }), facts, chart());
    }

    function chart() {
      const width = 320;
      const height = 110;
      const svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("viewBox", "0 0 " + width + " " + height);
      svg.setAttribute("class", "count-chart");
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", gettext("card counts of each seat over the game"));
      const every = Math.max(1, Math.ceil(tricks.length / CHART_POINTS));
      const points = [initialCounts];
      tricks.forEach((trick, t) => { if (t % every === 0 || t === tricks.length - 1) points.push(trick.counts); });
      const x = (i) => (i / Math.max(1, points.length - 1)) * (width - 4) + 2;
      const y = (n) => height - 2 - (n / deckSize) * (height - 4);
      for (let seat = 0; seat < seats; seat++) {
        const line = document.createElementNS(SVG, "polyline");
        line.setAttribute("points", points.map((c, i) => x(i).toFixed(1) + "," + y(c[seat]).toFixed(1)).join(" "));
        line.setAttribute("class", "seat-line seat-" + seat);
        svg.append(line);
      }
      const legend = el("p", { class: "chart-legend" });
      for (let seat = 0; seat < seats; seat++) {
        legend.append(el("span", { class: "key seat-" + seat, text: seatName(seat) }));
      }
      return el("figure", { class: "chart-figure" }, svg, el("figcaption", { text: gettext("Cards held, trick by trick") }), legend);
    }

    // --- Prisoners of War: moves through the API -----------------------------------------

    function strength(code) {
      return (game.rules.peace ? -1 : 1) * RANK_VALUES[code[0]];
    }

    /* The dealer's rule (docs/rules.md): the best card face up, the weakest ones face down (under
       peace the lowest is the best). */
    function suggested(options, count) {
      const up = options.reduce((best, card) => (strength(card) > strength(best) ? card : best), options[0]);
      const rest = options.filter((card) => card !== up).sort((a, b) => strength(a) - strength(b));
      return { up, down: rest.slice(0, count - 1), cards: options.slice().sort((a, b) => strength(b) - strength(a)) };
    }

    function pick(type, name, code, checked) {
      const input = el("input", { type, name, value: code });
      input.checked = checked;
      if (type === "radio") input.required = true;
      return el("label", { class: "pick" }, input, " ", window.SotaCards.card(code, "small"));
    }

    function drawMove(form, pending) {
      const move = suggested(pending.options, pending.count);
      // The form answers this choice now; records.js reads data-move as the form is sent.
      form.dataset.move = String(pending.move);
      form.elements.move.value = String(pending.move);
      const table = $("on-table");
      table.replaceChildren(el("strong", { text: gettext("On the table:") }));
      pending.table.forEach((cards, seat) => {
        const spot = el("span", { class: "table-seat", "data-seat": String(seat) }, el("span", { class: "seat-name", text: seatName(seat) }));
        if (!cards.length) spot.append(el("span", { class: "muted", text: gettext("no cards") }));
        for (const code of cards) spot.append(code ? window.SotaCards.card(code, "mini") : window.SotaCards.back("mini"));
        table.append(spot);
      });
      $("up-options").replaceChildren(...move.cards.map((c) => pick("radio", "up", c, c === move.up)));
      const down = $("down-options");
      const count = pending.count;
      const about = $("move-about");
      // The template's own sentences, the count drawn in <strong> here.
      const lay = ngettext("Your pile is empty, so you play from the cards you won (strongest first). Lay <strong>%(count)s</strong> card:",
        "Your pile is empty, so you play from the cards you won (strongest first). Lay <strong>%(count)s</strong> cards:", count);
      about.replaceChildren(...nodes(lay.replace(/<\/?strong>/g, ""), { count: el("strong", { text: String(count) }) }), " " +
        (count > 1
          ? ngettext("pick %(num)s to lay face down and one to lay face up.", "pick %(num)s to lay face down and one to lay face up.", count - 1)
          : gettext("pick the one to lay face up.")) + " " +
        (game.rules.peace
          ? (count > 1
            ? gettext("The dealer's choice is picked for you: the lowest face up, the highest face down.")
            : gettext("The dealer's choice is picked for you: the lowest face up."))
          : (count > 1
            ? gettext("The dealer's choice is picked for you: the highest face up, the lowest face down.")
            : gettext("The dealer's choice is picked for you: the highest face up."))));
      if (count > 1) {
        let fieldset = $("down-fieldset");
        if (!fieldset) {
          fieldset = el("fieldset", { id: "down-fieldset" }, el("legend", {}), el("div", { class: "options", id: "down-options" }));
          $("up-options").closest("fieldset").after(fieldset);
        }
        fieldset.hidden = false;
        fieldset.querySelector("legend").textContent = gettext("Face down (%(count)s)", { count: count - 1 });
        $("down-options").replaceChildren(...move.cards.map((c) => pick("checkbox", "down", c, move.down.includes(c))));
      } else if (down) {
        $("down-fieldset").hidden = true;
        down.replaceChildren();
      }
    }

    function resultBanner() {
      const won = game.winner === 0 || game.winner === "team_0";
      const banner = el("div", { class: "result-banner " + (won ? "win" : (game.winner === "draw" ? "" : "lose")), id: "game-result", "data-testid": "result" },
        el("div", { class: "headline", text: window.SotaI18n.sotaWinner(game.winner) }),
        el("p", { class: "net" }, ...nodes(ngettext("Net %(net)s sweet", "Net %(net)s sweets", Math.abs(game.net)), {
          net: el("strong", { class: game.net > 0 ? "pos" : (game.net < 0 ? "neg" : ""),
            text: number(game.net, 0, true) }) }),
          " · " + ngettext("%(num)s trick", "%(num)s tricks", tricks.length)),
        el("p", {}, ...nodes(ngettext("Balance now %(balance)s sweet", "Balance now %(balance)s sweets", game.balances.sweets), {
          balance: el("strong", { text: number(game.balances.sweets) }) }), " · ",
          el("a", { href: "/history/" + game.id, text: gettext("receipt") }), " · ", el("a", { href: "/sota", text: gettext("other rules or stake") })));
      $("game-end").append(banner);
      const again = $("deal-again-form");
      if (again) again.hidden = false;
      window.SotaI18n.showBalance("sweets", game.balances.sweets);
    }

    /* Show the game as the API answered it, and the move form for the choice it waits for. */
    function showGame(form, answer) {
      game = answer;
      build();
      if (game.status === "settled") {
        form.remove();
        resultBanner();
        summary();
      } else {
        drawMove(form, game.pending);
      }
      go(frames.length - 1); // the replay shows the trick the table is at
    }

    async function sendMove(event) {
      const form = event.currentTarget;
      event.preventDefault();
      const up = form.querySelector("input[name=up]:checked");
      const error = $("move-error");
      const count = game.pending.count;
      const down = Array.from(form.querySelectorAll("input[name=down]:checked"), (i) => i.value).filter((c) => !up || c !== up.value);
      if (!up || down.length !== count - 1) {
        error.textContent = !up ? gettext("Pick the card to lay face up.")
          : ngettext("Pick exactly %(num)s other card to lay face down (%(picked)s picked).",
            "Pick exactly %(num)s other cards to lay face down (%(picked)s picked).", count - 1, { picked: down.length });
        error.hidden = false;
        return;
      }
      const cards = down.concat([up.value]);
      // The choice these cards answer: sent again once laid (a retry, a second tab), it is refused.
      const number = game.pending.move;
      const button = $("submit-move");
      button.disabled = true;
      try {
        let signed;
        try {
          signed = window.SotaPlayerKey ? await window.SotaPlayerKey.signAction({
            game: "sota", round_id: game.id, seed_pair_id: game.seed_pair_id, nonce: game.nonce,
            index: number, choice: cards,
          }) : {};
        } catch (failure) {
          error.textContent = String(failure.message || failure);
          error.hidden = false;
          return;
        }
        const response = await fetch(form.dataset.api, {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "Idempotency-Key": key(),
            "X-CSRF-Token": document.querySelector("meta[name=csrf-token]").content,
            "Accept-Language": window.SotaI18n.locale() },
          body: JSON.stringify({ cards, move: number, ...signed }),
        });
        const answer = await response.json();
        if (!response.ok) {
          if (answer.error && answer.error.code === "move_not_due") {
            // Laid already (another tab, a copy): show the table as it stands now.
            const now = await fetch(form.dataset.gameApi, { credentials: "same-origin" });
            if (now.ok) showGame(form, await now.json());
          }
          error.textContent = answer.error ? answer.error.message[0].toUpperCase() + answer.error.message.slice(1) : gettext("The move was refused.");
          error.hidden = false;
          return;
        }
        if (window.SotaRecords) {
          window.SotaRecords.recordAction({ round_id: game.id, seed_pair_id: game.seed_pair_id, nonce: game.nonce,
            game: "sota", move: number, cards });
        }
        error.hidden = true;
        showGame(form, answer);
      } catch (failure) {
        error.textContent = gettext("The table could not be reached. Check your connection and lay the cards again.");
        error.hidden = false;
      } finally {
        button.disabled = false;
      }
    }

    playBtn.addEventListener("click", toggle);
    $("step").addEventListener("click", () => { pause(); go(position + 1); });
    $("step-back").addEventListener("click", () => { pause(); go(position - 1); });
    $("to-start").addEventListener("click", () => { pause(); go(0); });
    $("to-end").addEventListener("click", () => { pause(); go(frames.length - 1); });
    $("next-war").addEventListener("click", () => { pause(); nextWar(); });
    $("show-result").addEventListener("click", () => { pause(); go(frames.length - 1); });
    speed.addEventListener("change", pace);
    scrub.addEventListener("input", () => { pause(); go(trickEnd[Number(scrub.value)] || 0); });

    onKey = (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const tag = event.target && event.target.tagName;
      // Fields keep their own keys; a focused button keeps Space (it presses the button).
      const field = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
      let handled = true;
      if (event.key === " " && !field && tag !== "BUTTON") toggle();
      else if (event.key === "ArrowRight" && !field) { pause(); go(position + 1); }
      else if (event.key === "ArrowLeft" && !field) { pause(); go(position - 1); }
      else if (event.key === "Home" && !field) { pause(); go(0); }
      else if (event.key === "End" && !field) { pause(); go(frames.length - 1); }
      else if ((event.key === "n" || event.key === "N") && !field) { pause(); nextWar(); }
      else if (event.key === "+" || event.key === "=") bumpSpeed(1);
      else if (event.key === "-") bumpSpeed(-1);
      else if ((event.key === "p" || event.key === "P") && !field && again && !again.hidden) again.requestSubmit();
      else handled = false;
      if (handled) event.preventDefault();
    };

    const again = $("deal-again-form");
    if (again) {
      again.addEventListener("submit", (event) => {
        event.preventDefault();
        pause();
        start(JSON.parse(again.dataset.body), again);
      });
    }

    /* A phone no taller than 600 px held upright shows two rows of seats whole above the
     * replay's dock and Deal again only without the site's header and the game's title: the
     * page then stands with the seats at the top of the screen, once, as the game is shown,
     * unless the player has scrolled it already. */
    function showTheSeats() {
      const rows = seatEls.length > 1 && seatEls.at(-1).offsetTop > seatEls[0].offsetTop;
      if (!rows || window.scrollY !== 0 || !window.matchMedia(SHORT_UPRIGHT).matches) return;
      seatBox.scrollIntoView({ block: "start", behavior: "instant" });
    }

    build();
    pace();
    summary();
    if (heldBack) showBalance();
    const moveForm = $("move-form");
    /* Shown again (reloaded, or come back to), the replay starts over at the deal and hides the
     * result: the place the browser kept, the result's where the page had brought it at the
     * game's end, left the seats above the screen. A game waiting for a move keeps its place
     * (its form is below the table). */
    window.history.scrollRestoration = moveForm ? "auto" : "manual";
    if (moveForm) {
      moveForm.addEventListener("submit", sendMove);
      go(frames.length - 1); // waiting for a move: the replay stands where the table is
    } else {
      render();
    }
    showTheSeats();
    window.SotaReplay = { go, play, pause, frames: () => frames.length, position: () => position,
      game: () => game.id, held: () => heldBack };
  }

  // --- A new game in the page ----------------------------------------------------------------

  let onKey = null; // the keys of the game on screen
  let dealing = false;

  /* Deal a game through the API (`body` as POST /api/v1/sota/games takes it) and show it in
   * place. A refused game is sent again as the page's own form, whose page says why in the
   * form's words and keeps what was typed. */
  async function start(body, form) {
    if (dealing) return;
    dealing = true;
    const buttons = Array.from(form.querySelectorAll("button[type=submit]"));
    for (const b of buttons) b.disabled = true;
    // The stake and the rule set as sent: the receipt must be played on them.
    const sent = { game: "sota", stake: body.stake, ...(typeof body.preset === "string" ? { preset: body.preset } : { rules: body.rules }) };
    try {
      let game = null;
      try {
        // With a key, the game is signed for the nonce it takes, over every rule it is played
        // by; if another bet (another tab) took that nonce first, it is signed again, once.
        for (let attempt = 0; attempt < 2 && !game; attempt += 1) {
          const signed = await signedBet(body);
          const response = await fetch("/api/v1/sota/games", {
            method: "POST", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "Idempotency-Key": key(),
              "X-CSRF-Token": document.querySelector("meta[name=csrf-token]").content },
            body: JSON.stringify({ ...body, ...signed }),
          });
          if (response.ok) game = await response.json();
          else if (!("nonce" in signed) || (await response.json().catch(() => ({}))).error?.code !== "nonce_not_next") break;
        }
      } catch (failure) {
        // the table could not be reached in the page, or the bet could not be signed here: the
        // plain form follows, and its page says why
      }
      if (!game) {
        try {
          window.SotaRecords.keepPendingBet(sent); // recorded if the answer is the dealt game
        } catch (error) { /* not recorded */ }
        form.submit(); // its page says why in the form's words, or shows the game dealt
        return;
      }
      try {
        window.SotaRecords.recordBet({ round_id: game.id, seed_pair_id: game.seed_pair_id, nonce: game.nonce, ...sent });
      } catch (error) { /* not recorded */ }
      // Dealt again before the replay on screen reached its end: what it held back, it still
      // holds back, with the new game's payout (its replay's end shows both).
      const replaced = window.SotaReplay;
      const carried = replaced ? replaced.held() : 0;
      if (carried) {
        const held = heldResults();
        delete held[replaced.game()];
        keepHeld(held);
      }
      try {
        await show(game.id, carried);
      } catch (failure) {
        window.location.assign("/sota/games/" + game.id); // dealt: never sent again
      }
    } finally {
      dealing = false;
      for (const b of buttons) b.disabled = false;
    }
  }

  /* The fields that sign a game's bet (`body` as POST /api/v1/sota/games takes it): {} without
   * a key; with one, the player's signature over the bet document, whose rules are every rule
   * the game is played by (the preset's, or the rules sent with the defaults for the rest).
   * Rules the engine refuses are sent unsigned, for the table to say why. */
  async function signedBet(body) {
    if (!window.SotaPlayerKey) return {};
    let rules;
    try {
      rules = typeof body.preset === "string" ? window.SotaEngine.presetRules(body.preset) : window.SotaEngine.ruleSet(body.rules);
    } catch (failure) {
      return {};
    }
    return window.SotaPlayerKey.signBet({ game: "sota", stakes: { stake: body.stake }, rules });
  }

  /* Replace the page's content with the game's view (header balances included) and replay it. */
  async function show(id, carried) {
    const url = "/sota/games/" + id;
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) {
      window.location.assign(url);
      return;
    }
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    document.querySelector("main").replaceChildren(...page.querySelector("main").childNodes);
    const wallet = page.querySelector("[data-testid=header-balance]");
    const shown = document.querySelector("[data-testid=header-balance]");
    if (wallet && shown) shown.replaceWith(wallet);
    document.title = page.title;
    window.history.pushState({ sotaGame: id }, "", url);
    window.scrollTo(0, 0);
    setup(true, carried);
    const play = $("play-pause");
    if (play) play.focus({ preventScroll: true });
  }

  function key() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  document.addEventListener("keydown", (event) => { if (onKey) onKey(event); });
  // Back and forward between games shown in place: load the page the address names.
  window.addEventListener("popstate", () => window.location.reload());
  window.SotaGame = { start };
  document.addEventListener("DOMContentLoaded", () => setup(false));
})();
