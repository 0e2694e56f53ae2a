/* Sota table: touching a custom rule picks "Your own rules"; P deals; one submit only.
 * With sota.js the game is dealt through the JSON API and shown in place (SotaGame.start). */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const custom = document.getElementById("preset-custom");
  const details = document.getElementById("custom-rules");
  if (custom && details) {
    details.addEventListener("change", () => { custom.checked = true; });
    details.addEventListener("toggle", () => { if (details.open) custom.checked = true; });
  }
  const table = document.getElementById("table-form");
  if (table && window.SotaGame) {
    table.addEventListener("submit", (event) => {
      if (!table.checkValidity()) return; // the browser says what is wrong with the field
      event.preventDefault();
      window.SotaGame.start(requestBody(table), table);
    });
  }
  for (const form of document.querySelectorAll("form[data-once]")) {
    form.addEventListener("submit", (event) => {
      if (event.defaultPrevented) return; // sent in the page, which guards it itself
      setTimeout(() => { for (const b of form.querySelectorAll("button[type=submit]")) b.disabled = true; }, 0);
    });
  }
  /* The API's body for the form, as the server reads the same form without JavaScript
   * (sota.play): a preset, a preset with more seats, or the custom rules. */
  function requestBody(form) {
    const fields = new FormData(form);
    const stake = Number(fields.get("stake"));
    const seats = Number(fields.get("seats") || 2);
    const preset = fields.get("preset");
    if (preset !== "custom") {
      if (seats === 2) return { stake, preset };
      return { stake, rules: { ...JSON.parse(form.dataset.presets)[preset], seats } };
    }
    const rules = { seats };
    for (const input of form.querySelectorAll("[name^=rule_]")) {
      const name = input.name.slice("rule_".length);
      const text = input.value.trim();
      if (input.type === "checkbox") rules[name] = input.checked;
      else if (input.type === "radio") { if (input.checked) rules[name] = /^[0-9]+$/.test(text) ? Number(text) : text; }
      else if (text) rules[name] = Number(text);
      else if (name === "lead") rules[name] = null;
    }
    return { stake, rules };
  }

  document.addEventListener("keydown", (event) => {
    const t = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (t && ["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName) && !["radio", "checkbox"].includes(t.type)) return;
    if (event.key.toLowerCase() === "p") {
      const play = document.getElementById("play");
      if (play) { event.preventDefault(); play.click(); }
    }
  });
});
