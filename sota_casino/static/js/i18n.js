/* The page's language for the scripts: `gettext("...")` and `ngettext(singular, plural, n)`
 * read the translations the server put in `<script type="application/json" id="translations">`
 * (the CSP allows no inline script). `%(name)s` placeholders are filled from `params`, and
 * `%(num)s` is the count in ngettext. Without the block the ids (English) are shown.
 * Strings are found for the catalogues by `pybabel extract` (its javascript extractor), so
 * call these with literal strings.
 */
"use strict";

(function () {
  let book = { locale: "en", messages: {}, plural: [], plural_other: 1 };
  const block = document.getElementById("translations");
  if (block) {
    try {
      book = JSON.parse(block.textContent);
    } catch (error) {
      /* a damaged block: English it is */
    }
  }

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

  function ngettext(singular, plural, n, params) {
    const forms = book.messages[singular];
    const all = Object.assign({ num: n }, params || {});
    if (Array.isArray(forms)) {
      const whole = Math.abs(Math.trunc(n));
      const form = whole < book.plural.length ? book.plural[whole] : book.plural_other;
      if (forms[form]) return fill(forms[form], all);
    }
    return fill(n === 1 ? singular : plural, all);
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

  /* A whole number in the page's language: 1200 → "1,200" (English), "1 200" (Finnish). */
  function number(value, decimals) {
    return Number(value).toLocaleString(book.locale, {
      minimumFractionDigits: decimals || 0, maximumFractionDigits: decimals || 0,
    });
  }

  window.SotaI18n = { gettext: gettext, ngettext: ngettext, locale: locale, nodes: nodes, number: number };

  /* The header's language picker: choosing a language sends its form (its button is for pages
   * without JavaScript). */
  document.addEventListener("change", function (event) {
    const picker = event.target.closest && event.target.closest("form[data-language-picker]");
    if (picker) picker.submit();
  });
  window.gettext = gettext;
  window.ngettext = ngettext;
})();
