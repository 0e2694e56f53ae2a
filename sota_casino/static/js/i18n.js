/* The page's language for the scripts: `gettext("...")` and `ngettext(singular, plural, n)`
 * read the page language's translations, which the script before this one sets as
 * `window.SotaTranslations` (web/i18n.py's `scripts_words`, kept by the browser). `%(name)s`
 * placeholders are filled from `params`, and `%(num)s` is the count in ngettext. Without them
 * the ids (English) are shown.
 * Strings are found for the catalogues by `pybabel extract` (its javascript extractor), so
 * call these with literal strings, and never inside another call of them: the extractor skips
 * a call in another's arguments (word the inner text first, into a const). `N_` and `Nn_` mark
 * a message shown later (see `say`).
 */
"use strict";

(function () {
  const english = { locale: "en", messages: {}, plural: [], plural_other: 1, datetime: "{1}, {0}" };
  const served = window.SotaTranslations;
  /* none (the script did not load) or a damaged one: English it is */
  const book = served && typeof served.messages === "object" ? served : english;

  function fill(text, params) {
    if (!params) return text;
    return text.replace(/%\((\w+)\)s/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole;
    });
  }

  function gettext(message, params) {
    const found = book.messages[message];
    return fill(typeof found === "string" && found ? found : message, params);
  }

  /* A message that counts, with a no-break space after each placeholder: no line ends between
   * a number and its word ("12 chips", "12 pelimerkkiä"). web/i18n.py's `counted`, the same. */
  function counted(message) {
    return message.replace(/(%\(\w+\)s(?:<\/\w+>)?) /g, "$1\u00a0");
  }

  function ngettext(singular, plural, n, params) {
    const forms = book.messages[singular];
    const all = Object.assign({ num: n }, params || {});
    if (Array.isArray(forms)) {
      const whole = Math.abs(Math.trunc(n));
      const form = whole < book.plural.length ? book.plural[whole] : book.plural_other;
      if (forms[form]) return fill(counted(forms[form]), all);
    }
    return fill(counted(n === 1 ? singular : plural), all);
  }

  /* The page's locale, for numbers the scripts format (Intl) and the API's messages. */
  function locale() {
    return book.locale;
  }

  /* A translated text as a list of strings and nodes: `%(name)s` becomes `params[name]`,
   * which may be an element (a <strong> amount inside a sentence). */
  function nodes(text, params) {
    const parts = [];
    let last = 0;
    text.replace(/%\((\w+)\)s/g, function (whole, name, at) {
      parts.push(text.slice(last, at));
      const value = params && Object.prototype.hasOwnProperty.call(params, name) ? params[name] : whole;
      parts.push(typeof value === "object" ? value : String(value));
      last = at + whole.length;
      return whole;
    });
    parts.push(text.slice(last));
    return parts.filter(function (part) { return part !== ""; });
  }

  /* The sign every shown negative number takes (format.py's MINUS): Intl writes a
   * hyphen-minus in English and Portuguese. */
  const MINUS = "\u2212";

  /* A number with `decimals` decimals in the page's language, as the server writes it
   * (format.py's decimal): 1200 → "1,200" (English), "1 200" (Finnish); −7.125 → "−7.12"
   * (ties to the even digit); one that rounds to nought has no sign; "+" when `signed`. */
  function number(value, decimals, signed) {
    const digits = decimals || 0;
    const given = Number(value);
    const shown = Math.abs(given).toLocaleString(book.locale, {
      minimumFractionDigits: digits, maximumFractionDigits: digits, roundingMode: "halfEven",
    });
    if (!/[1-9]/.test(shown)) return shown;
    return (given < 0 ? MINUS : (signed && given > 0 ? "+" : "")) + shown;
  }

  /* Hundredths of a chip as chips (format.py's chips): 150 → "1.50", 120000 → "1,200". */
  function chips(amount, signed) {
    return number(amount / 100, Math.abs(amount) % 100 ? 2 : 0, signed);
  }

  /* The count that picks the plural form of `amount` hundredths of a chip (format.py's
   * chip_count): the whole chips, or for a fraction a whole count of its CLDR category
   * ("1.50 chips" is plural in English, "1,50 ficha" singular in Portuguese). */
  function chipCount(amount) {
    const whole = Math.floor(Math.abs(amount) / 100);
    if (Math.abs(amount) % 100 === 0) return whole;
    const rules = new Intl.PluralRules(book.locale);
    const category = rules.select(Math.abs(amount) / 100);
    const same = [whole, 2, 5, 0, 1, 1000000].find((n) => rules.select(n) === category);
    return same === undefined ? whole : same;
  }

  /* An amount of chips or sweets in words, its unit in the plural form of the amount and the
   * amount left as `%(amount)s`: "%(amount)s chip", "%(amount)s pelimerkkiä". */
  function chipsWords(amount) {
    return ngettext("%(amount)s chip", "%(amount)s chips", chipCount(amount));
  }

  function sweetsWords(amount) {
    return ngettext("%(amount)s sweet", "%(amount)s sweets", Math.abs(amount));
  }

  function chipsText(amount, signed) {
    return fill(chipsWords(amount), { amount: chips(amount, signed) });
  }

  /* Chips got back ("surrender and get 1 chip back"): format.py's chips_back_text, the same. */
  function chipsBackText(amount) {
    return ngettext("%(amount)s chip back", "%(amount)s chips back", chipCount(amount), { amount: chips(amount) });
  }

  function sweetsText(amount, signed) {
    return fill(sweetsWords(amount), { amount: number(amount, 0, signed) });
  }

  const BALANCE_WORDS = {
    chips: { words: chipsWords, number: (amount) => chips(amount) },
    sweets: { words: sweetsWords, number: (amount) => number(amount) },
  };

  /* Show a balance ("chips" or "sweets") wherever the page shows it: each [data-balance]
   * element of it (the header's, a table's pill) holds its words, the amount in its
   * [data-amount] element. The unit is picked again for the new amount: with the number
   * alone rewritten, "1 sweet" went on to read "11 sweet". */
  function showBalance(currency, amount) {
    const balance = BALANCE_WORDS[currency];
    for (const place of document.querySelectorAll(`[data-balance="${currency}"]`)) {
      const shown = place.querySelector("[data-amount]");
      shown.textContent = balance.number(amount);
      place.replaceChildren(...nodes(balance.words(amount), { amount: shown }));
    }
  }

  /* A moment as the pages write it (the `when` filter): in UTC, saying so, with the date and
   * time in the page's language joined as its `datetime` pattern says:
   * "2026-12-01T19:50:05Z" → "Dec 1, 2026, 7:50 PM UTC", "1.12.2026 19.50 UTC". Text that is
   * no time is shown as it is. */
  function time(iso) {
    const moment = new Date(iso);
    if (typeof iso !== "string" || Number.isNaN(moment.getTime())) return String(iso);
    const part = (style) => new Intl.DateTimeFormat(book.locale, Object.assign({ timeZone: "UTC" }, style)).format(moment);
    const pattern = typeof book.datetime === "string" ? book.datetime : "{1}, {0}";
    // The server's CLDR joins a time and its AM/PM by a narrow no-break space; the browser's may
    // use a plain one, which lets a line end between "9:15" and "PM".
    const clock = part({ timeStyle: "short" }).replace(/ /g, "\u202f");
    return pattern.replace("{1}", part({ dateStyle: "medium" })).replace("{0}", clock) + " UTC";
  }

  /* Who won a Sota game, in a whole sentence: the server writes each winner's (web/winner_words.py)
   * into the block, as the game's page says it ("Dealeren vinner", not the seat's label and a
   * verb). `winner` is the outcome's: "draw", "team_0", "team_1" or a seat's number. */
  function sotaWinner(winner) {
    const said = book.sota_winners && book.sota_winners[String(winner)];
    return typeof said === "string" ? said : String(winner);
  }

  /* A message kept for later as its ids, not its text, so that it is shown in the language of
   * the page that shows it: `{ id, params }`, or `{ id, plural, num, params }` with a plural.
   * N_("…") and Nn_("…", "…") mark the ids for the catalogues and make these; a param may be
   * such a message too. `say` translates one (a string is text already, and stays). */
  function N_(id, params) {
    return { id: id, params: params || {} };
  }

  function Nn_(singular, plural, num, params) {
    return { id: singular, plural: plural, num: num, params: params || {} };
  }

  function say(message) {
    if (!message || typeof message !== "object") return String(message);
    const params = {};
    for (const [name, value] of Object.entries(message.params || {})) {
      params[name] = value && typeof value === "object" ? say(value) : value;
    }
    return typeof message.plural === "string"
      ? ngettext(String(message.id), message.plural, Number(message.num), params)
      : gettext(String(message.id), params);
  }

  window.SotaI18n = {
    gettext: gettext, ngettext: ngettext, locale: locale, nodes: nodes, time: time, say: say,
    sotaWinner: sotaWinner,
    number: number, chips: chips, chipCount: chipCount, chipsText: chipsText, chipsBackText: chipsBackText, sweetsText: sweetsText,
    showBalance: showBalance,
  };

  /* The header's language picker: choosing a language sends its form (its button is for pages
   * without JavaScript), and the player comes back to the page they see. The server wrote that
   * page's address into the form; a script that has since shown another page in place (a Sota
   * game dealt or dealt again) moved the address bar there, so that address wins. */
  const loadedAt = window.location.pathname + window.location.search;
  function pickerOf(target) {
    return target.closest ? target.closest("form[data-language-picker]") : null;
  }
  function sendPicker(picker) {
    const here = window.location.pathname + window.location.search;
    const next = picker.elements.namedItem("next");
    if (next && here !== loadedAt) next.value = here;
    picker.submit();
  }
  /* The arrow keys (or a typed letter) on the closed picker step its choice one language at a
   * time: sending each step would take a keyboard user passing through suomi to reach português
   * away at the first. A stepped choice goes on Enter or on leaving the picker; a choice from
   * the open list, or with a pointer, goes at once. */
  const STEP_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"];
  let keyed = false;
  let stepped = null;
  document.addEventListener("keydown", function (event) {
    const picker = pickerOf(event.target);
    if (!picker) return;
    if (event.key === "Enter" && stepped === picker) {
      event.preventDefault();
      stepped = null;
      sendPicker(picker);
      return;
    }
    keyed = !event.altKey && (STEP_KEYS.includes(event.key) || (event.key.length === 1 && event.key !== " "));
  });
  document.addEventListener("pointerdown", function () { keyed = false; });
  document.addEventListener("change", function (event) {
    const picker = pickerOf(event.target);
    if (!picker) return;
    if (keyed) {
      keyed = false;
      stepped = picker;
      return;
    }
    sendPicker(picker);
  });
  document.addEventListener("focusout", function (event) {
    const picker = pickerOf(event.target);
    if (!picker || picker !== stepped || picker.contains(event.relatedTarget)) return;
    stepped = null;
    sendPicker(picker);
  });
  window.gettext = gettext;
  window.ngettext = ngettext;
  window.N_ = N_;
  window.Nn_ = Nn_;
})();
