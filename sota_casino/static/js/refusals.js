/* A refused form's field: focused, and on the screen with its message, above a row of buttons
 * kept at the screen's foot (Casino War's Deal row, Sota's "Deal the game" bar on a phone).
 *
 * The server's page marks the field (aria-invalid, its message named by aria-errormessage and
 * aria-describedby); a table's script marks it the same way when a bet is refused in the page
 * (mark()) and calls show().
 * The message stands above the field: without this, a long one pushed the field under the
 * Deal row on a 360 px phone, and nothing focused it or scrolled it into view.
 */
"use strict";

(function () {
  const ROOM = 8; // px kept between the field or its message and the edges of what is seen

  /* The top of the lowest thing a sticky or fixed box of the form covers: the screen's foot
   * less the box's height, or the screen's foot when the form keeps nothing there. */
  function footTop(form) {
    let top = window.innerHeight;
    for (const node of form.querySelectorAll("*")) {
      const position = getComputedStyle(node).position;
      if ((position === "sticky" || position === "fixed") && node.offsetHeight) {
        top = Math.min(top, window.innerHeight - node.offsetHeight);
      }
    }
    return top;
  }

  /* Focus `field` and scroll as little as shows it above the form's foot and its message
   * below the screen's top; where both do not fit, the field wins. */
  function show(field) {
    field.focus({ preventScroll: true });
    const id = field.getAttribute("aria-errormessage");
    const message = id ? document.getElementById(id) : null;
    const box = field.getBoundingClientRect();
    const foot = field.form ? footTop(field.form) : window.innerHeight;
    const least = box.bottom - (foot - ROOM); // down at least this far, for the field
    const top = message && !message.hidden ? Math.min(message.getBoundingClientRect().top, box.top) : box.top;
    const most = top - ROOM; // down at most this far (up, if below 0), for the message
    let by = 0;
    if (least > 0) by = least;
    else if (most < 0) by = Math.max(most, least);
    if (by) window.scrollBy({ top: by, behavior: "instant" });
  }

  /* Mark `field` as the refusal in #form-error is about it (or, `marked` false, no longer), as
   * the server's page does (_macros.html, invalid_attrs): invalid, the refusal its error
   * message and the first of what describes it, before its help. */
  function mark(field, marked) {
    const described = (field.getAttribute("aria-describedby") || "").split(" ")
      .filter((id) => id && id !== "form-error");
    if (marked) {
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-errormessage", "form-error");
      described.unshift("form-error");
    } else {
      field.removeAttribute("aria-invalid");
      field.removeAttribute("aria-errormessage");
    }
    if (described.length) field.setAttribute("aria-describedby", described.join(" "));
    else field.removeAttribute("aria-describedby");
  }

  /* The field a page drawn for a refused form marks: the one it focuses, else the first. */
  function refusedField() {
    const field = document.querySelector("form [aria-invalid=true][autofocus]")
      || document.querySelector("form [aria-invalid=true]");
    return field && field.getClientRects().length ? field : null;
  }

  function showRefused() {
    const field = refusedField();
    if (field) show(field);
  }

  /* What is drawn above the field after the page has loaded (the signing key's line, once the
   * service has said whether the player has a key) pushes it down again, under the foot's row:
   * show it again whenever the page's height changes, until the player scrolls, taps or types. */
  function keepRefusedShown() {
    const field = refusedField();
    if (!field || typeof ResizeObserver !== "function") return;
    const follow = new ResizeObserver(() => {
      if (document.activeElement === field) show(field);
    });
    follow.observe(document.body);
    const stop = () => follow.disconnect();
    for (const type of ["keydown", "pointerdown", "wheel", "touchstart"]) {
      window.addEventListener(type, stop, { once: true, capture: true, passive: true });
    }
  }

  /* A number field's own checks, in the page's language: the browser says "Value must be less
   * than or equal to 500." in its own, whatever the page's. The page gives each field the
   * server's words for the same refusal (_macros.html, number_words). */
  const WORDED = "input[data-limits-words]";

  function ownCheckWords(field) {
    const validity = field.validity;
    const words = field.dataset;
    if (validity.valueMissing) return words.missingWords || "";
    if (validity.badInput || validity.stepMismatch) return words.wholeWords || words.limitsWords;
    if (validity.rangeUnderflow && field.valueAsNumber < 0 && words.negativeWords) return words.negativeWords;
    if (validity.rangeUnderflow || validity.rangeOverflow) return words.limitsWords;
    return "";
  }

  /* Give `field`'s own check the page's words for its value now, or none when it passes. A
   * value a script sets fires no event, so the words are set again before each check. */
  function wordOwnCheck(field) {
    field.setCustomValidity("");
    if (!field.validity.valid) field.setCustomValidity(ownCheckWords(field));
  }

  function wordForm(form) {
    if (form) for (const field of form.querySelectorAll(WORDED)) wordOwnCheck(field);
  }

  for (const type of ["input", "change", "invalid"]) {
    document.addEventListener(type, (event) => {
      if (event.target.matches && event.target.matches(WORDED)) wordOwnCheck(event.target);
    }, true);
  }
  // A submit button's click (Enter in a field clicks it too) comes before the form's checks.
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button, input[type=submit]");
    if (button && button.type === "submit") wordForm(button.form);
  }, true);

  window.SotaRefusals = { show, mark };
  document.addEventListener("DOMContentLoaded", () => {
    for (const field of document.querySelectorAll(WORDED)) wordOwnCheck(field);
  });
  document.addEventListener("DOMContentLoaded", showRefused);
  // Again once the page has loaded: the browser's own autofocus and scrolling come after the
  // DOM is read, and on a slow phone they could leave the field under the foot's row.
  window.addEventListener("load", () => requestAnimationFrame(() => {
    showRefused();
    keepRefusedShown();
  }));
})();
