/* Sota table: touching a custom rule picks "Your own rules"; P deals; one submit only. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const custom = document.getElementById("preset-custom");
  const details = document.getElementById("custom-rules");
  if (custom && details) {
    details.addEventListener("change", () => { custom.checked = true; });
    details.addEventListener("toggle", () => { if (details.open) custom.checked = true; });
  }
  for (const form of document.querySelectorAll("form[data-once]")) {
    form.addEventListener("submit", () => {
      setTimeout(() => { for (const b of form.querySelectorAll("button[type=submit]")) b.disabled = true; }, 0);
    });
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
