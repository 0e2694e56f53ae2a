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
  function showRefused() {
    const field = document.querySelector("form [aria-invalid=true][autofocus]")
      || document.querySelector("form [aria-invalid=true]");
    if (field && field.getClientRects().length) show(field);
  }

  window.SotaRefusals = { show, mark };
  document.addEventListener("DOMContentLoaded", showRefused);
  // Again once the page has loaded: the browser's own autofocus and scrolling come after the
  // DOM is read, and on a slow phone they could leave the field under the foot's row.
  window.addEventListener("load", () => requestAnimationFrame(showRefused));
})();
