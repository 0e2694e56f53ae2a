/* Casino War table: chip buttons fill in the bet, and single keys play the table.
 *
 * Keys (when not typing in a field): D deal, W go to war, S surrender, 1–5 add a chip,
 * C clear the bet, T switch the chips between the ante and the tie bet.
 * Every action is also a normal button or form, so the table works without this script.
 */
"use strict";

(function () {
  function target() {
    const tie = document.getElementById("chips-to-tie");
    return document.getElementById(tie && tie.checked ? "tie_bet" : "bet");
  }

  function addChips(amount) {
    const input = target();
    if (!input) return;
    const current = parseInt(input.value, 10) || 0;
    const max = parseInt(input.max, 10) || Infinity;
    input.value = String(Math.min(current + amount, max));
    input.dispatchEvent(new Event("input"));
  }

  function clearBet() {
    for (const id of ["bet", "tie_bet"]) {
      const input = document.getElementById(id);
      if (input) input.value = id === "bet" ? "" : "0";
    }
  }

  function click(selector) {
    const node = document.querySelector(selector);
    if (node && !node.disabled) {
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

  document.addEventListener("DOMContentLoaded", () => {
    for (const chip of document.querySelectorAll("button[data-chips]")) {
      chip.addEventListener("click", () => addChips(parseInt(chip.dataset.chips, 10)));
    }
    const clear = document.getElementById("clear-bet");
    if (clear) clear.addEventListener("click", clearBet);

    // A double click must not deal twice: the form carries an idempotency key, and the button waits.
    for (const form of document.querySelectorAll("form[data-once]")) {
      form.addEventListener("submit", () => {
        // Later than the submit event: a disabled submitter would drop its name=value.
        setTimeout(() => {
          for (const b of form.querySelectorAll("button[type=submit]")) b.disabled = true;
        }, 0);
      });
    }

    const chipKeys = Array.from(document.querySelectorAll("button[data-chips]"));
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
      const key = event.key.toLowerCase();
      let done = false;
      if (key === "w") done = click("#go-to-war");
      else if (key === "s") done = click("#surrender");
      else if (key === "d") done = click("#deal");
      else if (key === "c") { clearBet(); done = true; }
      else if (key === "t") {
        const tie = document.getElementById("chips-to-tie");
        const ante = document.getElementById("chips-to-ante");
        if (tie && ante) { (tie.checked ? ante : tie).checked = true; done = true; }
      } else if (/^[1-9]$/.test(key) && chipKeys[Number(key) - 1]) {
        chipKeys[Number(key) - 1].click();
        done = true;
      }
      if (done) event.preventDefault();
    });
  });
})();
