/* Reading the casino's JSON (a bundle, an answer of its API, a checkpoint) as the offline
 * verifier reads it (core/fairness.py, whole_number_json): a number written with a fraction or
 * an exponent (`0.0`, `1e0`), zero with a minus sign (`-0`), or an integer beyond 2^53 - 1, is
 * refused, naming its place. The browser's JSON reader takes `0.0` for `0` and rounds larger
 * integers, where Python keeps each as written: the two verifiers would check different
 * documents. The casino writes none of them (docs/fairness.md, "Canonical JSON and
 * signatures"). Nor does it give an object's member twice, of which every reader keeps one value,
 * not every reader the same: that too is refused, naming its place.
 *
 * The numbers are found in the text itself, every one as written, by the same scan as the
 * offline verifier's, in every browser: JSON.parse's source text access (`context.source`) is
 * not in every browser, and it shows only the values a repeated key left standing, where
 * Python's reader sees every number written.
 */
"use strict";

(function () {
  // JSON's tokens but ":", true, false and null, in a text known to be JSON.
  const TOKENS = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[{}[\],]/g;
  const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
  const MAX_DIGITS = String(Number.MAX_SAFE_INTEGER).length;

  /* Why a number written so is none the casino writes, or null. */
  function refusal(written) {
    if (/[.eE]/.test(written)) return gettext("the casino writes whole numbers only");
    if (written === "-0") return gettext("the casino writes zero without a minus sign");
    const digits = written.replace("-", "");
    if (digits.length > MAX_DIGITS || Number(digits) > Number.MAX_SAFE_INTEGER) {
      return gettext("the casino writes none beyond 2^53 - 1, past which a browser reads them inexactly");
    }
    return null;
  }

  /* A place in a document as `rounds[0].document.nonce`; `$` for the whole of it. */
  function placeName(steps) {
    let place = "";
    for (const step of steps) {
      if (step.length === 1) place += "[" + step[0] + "]";
      else if (PLAIN_KEY.test(step[0])) place += (place ? "." : "") + step[0];
      else place += "[" + JSON.stringify(step[0]) + "]";
    }
    return place || "$";
  }

  /* The refusal of the first number of the JSON `text` that the casino does not write, or of
   * the first member an object gives a second time, in the order the text is written; null if
   * there is none. The browser's reader keeps the last value of a member given twice, as
   * Python's does, where readers of other languages keep the first: a document signed over one
   * payout and served with another beside it would be read apart (core/fairness.py,
   * MemberTwice). */
  function firstRefusal(text) {
    const steps = []; // [index] in an array, [key, awaiting a key, the keys given] in an object
    for (const [token] of text.matchAll(TOKENS)) {
      const first = token[0];
      const top = steps[steps.length - 1];
      if (first === "{") steps.push([null, true, new Set()]);
      else if (first === "[") steps.push([0]);
      else if (first === "}" || first === "]") steps.pop();
      else if (first === ",") {
        if (top.length === 1) top[0] += 1;
        else top[1] = true;
      } else if (first === '"') {
        if (top && top.length === 3 && top[1]) {
          const key = JSON.parse(token);
          top[0] = key;
          top[1] = false;
          if (top[2].has(key)) return gettext("a member is written twice at %(place)s: the casino writes each member of an object once, and readers differ in which they keep", { place: placeName(steps) });
          top[2].add(key);
        }
      } else {
        const why = refusal(token);
        if (why) return gettext("a number is written %(number)s at %(place)s: %(why)s", { number: token, place: placeName(steps), why });
      }
    }
    return null;
  }

  /* Parse the casino's JSON `text`; throws for text that is not JSON, or holds a number the
   * casino does not write or a member given twice (the error names it). */
  function read(text) {
    const value = JSON.parse(text); // what is not JSON is refused as such first, as offline
    const odd = firstRefusal(text);
    if (odd) throw new Error(odd);
    return value;
  }

  /* The JSON answer of `response`, read as `read` does. */
  async function answerOf(response) {
    return read(await response.text());
  }

  window.SotaJson = { read, answerOf };
})();
