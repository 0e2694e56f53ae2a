// A whole check runs in the background: show its progress, and reload the page when it ends.
(function () {
  "use strict";
  const holder = document.querySelector("[data-check-url]");
  if (!holder) return;
  const bar = holder.querySelector("progress");
  const count = holder.querySelector(".progress-count");
  async function poll() {
    let verdict;
    try {
      const answer = await fetch(holder.dataset.checkUrl, { headers: { Accept: "application/json" } });
      if (!answer.ok) return;
      verdict = await answer.json();
    } catch (error) {
      return;
    }
    if (!verdict.running && !verdict.requested) {
      window.location.reload();
      return;
    }
    if (bar && verdict.progress !== null) {
      bar.max = verdict.progress_total || 1;
      bar.value = verdict.progress;
      if (count) count.textContent = gettext("%(done)s of %(total)s", { done: verdict.progress, total: verdict.progress_total });
    }
    window.setTimeout(poll, 1500);
  }
  window.setTimeout(poll, 1500);
})();
