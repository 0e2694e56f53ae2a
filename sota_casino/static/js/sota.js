/* Sota replay: animates a game's trick log (from the page's JSON data block) trick by trick.
 *
 * One frame per step of a trick (the first flip, then each war); the last step of a trick also
 * shows who took the pot and the new card counts. Controls: play/pause, step, back, start, end,
 * speed and a slider over the tricks; keys Space, arrows, Home/End and +/-.
 */
"use strict";

(function () {
  const NAMES = ["You", "Dealer", "CPU 1", "CPU 2"];
  const DECK_SIZES = { standard52: 52, jokers54: 54, pjanitsa36: 36, piquet32: 32 };
  const BASE_DELAY = 900;

  function setup() {
    const data = document.getElementById("game-data");
    if (!data) return;
    const game = JSON.parse(data.textContent);
    const tricks = game.tricks || [];
    const seats = game.seats;
    const deckSize = DECK_SIZES[game.rules.deck] || 52;
    const dealt = Math.floor(deckSize / seats);
    const initialCounts = Array.from({ length: seats }, () => dealt);

    // Frames: [trickIndex, stepIndex]; frame 0 is the deal, before any trick.
    const frames = [[-1, 0]];
    const trickEnd = [0];
    tricks.forEach((trick, t) => {
      const steps = (trick.steps || [trick.laid.map((cards) => cards.length)]).length;
      for (let s = 0; s < steps; s++) frames.push([t, s]);
      trickEnd.push(frames.length - 1);
    });

    const seatEls = Array.from(document.querySelectorAll("#seats .seat"));
    const what = document.getElementById("trick-what");
    const scrub = document.getElementById("scrub");
    const trickNo = document.getElementById("trick-no");
    const playBtn = document.getElementById("play-pause");
    const speed = document.getElementById("speed");
    let position = 0;
    let timer = null;

    function stepsOf(trick) {
      return trick.steps || [trick.laid.map((cards) => cards.length)];
    }

    function seatName(seat) {
      return NAMES[seat] || "Seat " + seat;
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

      seatEls.forEach((el, seat) => {
        const laid = el.querySelector("[data-laid]");
        laid.replaceChildren();
        if (trick) {
          let offset = 0;
          for (let k = 0; k <= s; k++) {
            const n = steps[k][seat] || 0;
            const cards = trick.laid[seat].slice(offset, offset + n);
            offset += n;
            if (!cards.length) continue;
            const row = document.createElement("div");
            row.className = "step";
            cards.forEach((code, i) => {
              const faceDown = i < cards.length - 1;
              row.append(window.SotaCards.card(code, "small" + (faceDown ? " face-down-shown" : "") + (k === s ? " dealt" : "")));
            });
            laid.append(row);
          }
        }
        el.querySelector("[data-count]").textContent = String(counts[seat]);
        el.querySelector(".count-bar span").style.width = (100 * counts[seat] / deckSize).toFixed(1) + "%";
        el.classList.toggle("won", Boolean(trick && last && trick.winner === seat));
        el.classList.toggle("in-war", inWar.has(seat));
        el.classList.toggle("out", counts[seat] === 0 && position > 0);
      });

      what.replaceChildren();
      if (!trick) {
        what.textContent = "The deck is dealt: " + dealt + " cards each. Press play to watch the game.";
      } else {
        const head = document.createElement("strong");
        head.textContent = "Trick " + (t + 1) + ": ";
        what.append(head);
        if (s > 0) {
          const flag = document.createElement("span");
          flag.className = "war-flag";
          flag.textContent = s > 1 ? "WAR ×" + s : "WAR!";
          what.append(flag, " ");
        }
        let text;
        if (!last) text = "the top cards tie: war!";
        else if (trick.winner === null || trick.winner === undefined) text = "nobody could decide the war; its cards leave the game.";
        else text = seatName(trick.winner) + (trick.winner === 0 ? " take" : " takes") + " the pot" + (trick.wars ? " after " + trick.wars + (trick.wars > 1 ? " wars" : " war") : "") + ".";
        what.append(text);
      }
      const tricksShown = trick ? (last ? t + 1 : t) : 0;
      scrub.value = String(tricksShown);
      trickNo.textContent = tricksShown + " / " + tricks.length;
      const result = document.getElementById("game-result");
      if (result) result.hidden = position < frames.length - 1;
    }

    function go(to) {
      position = Math.max(0, Math.min(frames.length - 1, to));
      render();
      if (position === frames.length - 1) pause();
    }

    function delay() {
      const [t, s] = frames[Math.min(position + 1, frames.length - 1)];
      const war = t >= 0 && s > 0;
      return (war ? 1.4 : 1) * BASE_DELAY / Number(speed.value);
    }

    function tick() {
      go(position + 1);
      if (timer !== null) timer = setTimeout(tick, delay());
    }

    function play() {
      if (position === frames.length - 1) go(0);
      if (timer !== null) return;
      playBtn.textContent = "⏸ Pause";
      playBtn.setAttribute("aria-pressed", "true");
      timer = setTimeout(tick, 150);
    }

    function pause() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      playBtn.textContent = "▶ Play";
      playBtn.setAttribute("aria-pressed", "false");
    }

    function toggle() {
      if (timer === null) play();
      else pause();
    }

    function bumpSpeed(direction) {
      const i = speed.selectedIndex + direction;
      if (i >= 0 && i < speed.options.length) speed.selectedIndex = i;
    }

    playBtn.addEventListener("click", toggle);
    document.getElementById("step").addEventListener("click", () => { pause(); go(position + 1); });
    document.getElementById("step-back").addEventListener("click", () => { pause(); go(position - 1); });
    document.getElementById("to-start").addEventListener("click", () => { pause(); go(0); });
    document.getElementById("to-end").addEventListener("click", () => { pause(); go(frames.length - 1); });
    scrub.addEventListener("input", () => { pause(); go(trickEnd[Number(scrub.value)] || 0); });

    document.addEventListener("keydown", (event) => {
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
      else if (event.key === "+" || event.key === "=") bumpSpeed(1);
      else if (event.key === "-") bumpSpeed(-1);
      else handled = false;
      if (handled) event.preventDefault();
    });

    render();
    window.SotaReplay = { go, play, pause, frames: () => frames.length, position: () => position };
  }

  document.addEventListener("DOMContentLoaded", setup);
})();
