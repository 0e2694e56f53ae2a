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

  /* The page's locale, for numbers the scripts format (Intl). */
  function locale() {
    return book.locale;
  }

  window.SotaI18n = { gettext: gettext, ngettext: ngettext, locale: locale };
  window.gettext = gettext;
  window.ngettext = ngettext;
})();
