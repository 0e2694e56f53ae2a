/* The player's own signing key (docs/fairness.md, "Decisions the player signs").
 *
 * The browser makes an Ed25519 key with WebCrypto, not extractable, keeps it in IndexedDB and
 * registers its public half (POST /api/v1/me/keys). Once a key is registered, the service takes
 * no bet without the player's signature over its bet document, and no decision or move without
 * one over its action document, so the tables sign every bet through signBet() and every
 * decision and move through signAction(). Where WebCrypto has no Ed25519, the page says so and
 * plays unsigned (a player without a key is not asked to sign).
 *
 * The browser knows which keys it made: a key the account lists that this browser did not make
 * and that was registered after this browser's newest key is shown with a loud warning. It may
 * be the player's other device, or a key the casino registered for the player to sign choices
 * the player never made.
 */
"use strict";

(function () {
  const DB_NAME = "sota-casino";
  const STORE = "player-keys"; // CryptoKey pairs by public key hex
  const subtle = window.crypto && window.crypto.subtle;

  function hex(bytes) {
    return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function openDb() {
    return new Promise((resolve, reject) => {
      if (!window.indexedDB) { reject(new Error(gettext("this browser keeps no IndexedDB"))); return; }
      const request = window.indexedDB.open(DB_NAME, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  async function inStore(mode, act) {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const request = act(db.transaction(STORE, mode).objectStore(STORE));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  let support = null;
  /* Whether this browser can make and use a non-extractable Ed25519 key. */
  function supported() {
    if (support === null) {
      support = (async () => {
        if (!subtle || !window.indexedDB) return false;
        try {
          await subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
          return true;
        } catch (error) {
          return false;
        }
      })();
    }
    return support;
  }

  async function api(method, url, body) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["X-CSRF-Token"] = document.querySelector("meta[name=csrf-token]").content;
    }
    const response = await fetch(url, {
      method, credentials: "same-origin", headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      throw new Error(data && data.error ? data.error.message : gettext("the casino answered %(status)s", { status: response.status }));
    }
    return data;
  }

  async function madeHere(publicHex) {
    try {
      return Boolean(await inStore("readonly", (store) => store.get(publicHex)));
    } catch (error) {
      return false;
    }
  }

  /* The player's keys as the casino lists them, whether this browser holds the one in use, which
   * ones it made (`mine`, by key id), and `foreign`: the keys it did not make that were
   * registered after the newest one it did (none when it made none: then it cannot tell). */
  async function status() {
    const listed = await api("GET", "/api/v1/me/keys");
    const current = listed.keys.find((k) => k.key_id === listed.current_key_id) || null;
    const mine = new Set();
    for (const k of listed.keys) if (await madeHere(k.public_key_hex)) mine.add(k.key_id);
    const held = Boolean(current && mine.has(current.key_id));
    // Times are fixed-width UTC text: they compare as strings.
    const newest = listed.keys.filter((k) => mine.has(k.key_id)).map((k) => k.registered_at).sort().pop();
    const foreign = newest === undefined ? [] : listed.keys.filter((k) => !mine.has(k.key_id) && k.registered_at > newest);
    return { keys: listed.keys, current, held, mine, foreign };
  }

  /* Make a new key in this browser and register it (retiring the one in use, if any). */
  async function register() {
    if (!(await supported())) throw new Error(gettext("this browser cannot make Ed25519 keys"));
    const pair = await subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    const publicHex = hex(await subtle.exportKey("raw", pair.publicKey));
    await inStore("readwrite", (store) => store.put(pair, publicHex));
    return api("POST", "/api/v1/me/keys", { public_key_hex: publicHex });
  }

  /* The fields a decision or move carries: {} for a player without a key, else its signature
   * over the action document {type, v, game, round_id, seed_pair_id, nonce, index, choice}.
   * Throws, saying why, when the key in use is not in this browser. */
  async function signAction(action) {
    const now = await status();
    if (!now.current) return {};
    const actionDocument = {
      type: "action", v: 1, game: action.game, round_id: action.round_id,
      seed_pair_id: action.seed_pair_id, nonce: action.nonce, index: action.index, choice: action.choice,
    };
    return { signature: await signWithCurrent(now, actionDocument), key_id: now.current.key_id };
  }

  /* The fields a bet carries: {} for a player without a key, else the seed pair and the nonce
   * it takes (the active pair's next nonce, as GET /api/v1/fairness/seed-pair shows it) and its
   * signature over the bet document {type, v, user_id, game, seed_pair_id, nonce, stakes,
   * rules}: `bet` names the game, the stakes it sends ({bet, tie_bet} or {stake}) and every
   * rule it is played by. A bet that another took the nonce of first is refused (409
   * nonce_not_next): sign it again. Throws, saying why, when the key in use is not here. */
  async function signBet(bet) {
    const now = await status();
    if (!now.current) return {};
    const active = await api("GET", "/api/v1/fairness/seed-pair");
    const betDocument = {
      type: "bet", v: 1, user_id: active.commitment_document.user_id, game: bet.game,
      seed_pair_id: active.seed_pair_id, nonce: active.next_nonce, stakes: bet.stakes, rules: bet.rules,
    };
    const signature = await signWithCurrent(now, betDocument);
    return { seed_pair_id: active.seed_pair_id, nonce: active.next_nonce, signature, key_id: now.current.key_id };
  }

  /* The signature, in hex, of `doc`'s canonical bytes by the key in use (`now`, a status()),
   * which this browser must hold. */
  async function signWithCurrent(now, doc) {
    const pair = await inStore("readonly", (store) => store.get(now.current.public_key_hex));
    if (!pair) {
      throw new Error(gettext("Your bets and decisions must be signed with key %(key)s, which this browser does not hold. Make a new key on the fairness page to go on here.",
        { key: now.current.key_id }));
    }
    const bytes = new TextEncoder().encode(window.SotaRecords.canonical(doc));
    return hex(await subtle.sign({ name: "Ed25519" }, pair.privateKey, bytes));
  }

  // ---- the control: on the fairness page and at the tables -----------------------------------

  function text(node, value) {
    node.textContent = value;
  }

  async function draw(panel) {
    const line = panel.querySelector("[data-player-key-status]");
    const button = panel.querySelector("[data-player-key-make]");
    const can = await supported();
    let now;
    try {
      now = await status();
    } catch (error) {
      text(line, gettext("Your keys could not be read: %(reason)s", { reason: error.message }));
      return;
    }
    panel.dataset.keyId = now.current ? String(now.current.key_id) : "";
    panel.dataset.held = String(now.held);
    warn(panel, now.foreign);
    if (!can) {
      text(line, now.current
        ? gettext("This browser cannot sign with Ed25519 (WebCrypto), but your bets and decisions must be signed with key %(key)s: play from a browser that holds it, or from one that can make a new key.",
          { key: now.current.key_id })
        : gettext("This browser cannot make Ed25519 keys (WebCrypto), so your decisions are sent unsigned."));
      button.hidden = true;
      return;
    }
    if (!now.current) {
      text(line, gettext("Your decisions are not signed. Make a key in this browser to sign every bet, decision and move, so that no receipt can show a bet or a choice you did not make."));
      button.textContent = gettext("Make a signing key");
    } else if (now.held) {
      text(line, gettext("This browser signs your decisions, moves and bets with key %(key)s (%(fingerprint)s…), registered %(time)s.", {
        key: now.current.key_id, fingerprint: now.current.public_key_hex.slice(0, 16), time: window.SotaI18n.time(now.current.registered_at),
      }));
      button.textContent = gettext("Replace the key");
    } else {
      text(line, gettext("Your bets and decisions must be signed with key %(key)s, which this browser does not hold. Make a new key here to replace it (the old one stays listed, so what it signed stays checkable).",
        { key: now.current.key_id }));
      button.textContent = gettext("Make a new key");
    }
    button.hidden = panel.hasAttribute("data-offer-only") && Boolean(now.current && now.held);
    const list = panel.querySelector("[data-player-key-list]");
    if (list) {
      list.replaceChildren(...now.keys.map((k) => {
        const item = document.createElement("li");
        const fields = { key: k.key_id, fingerprint: k.public_key_hex.slice(0, 16), time: window.SotaI18n.time(k.retired_at) };
        item.textContent = (k.retired_at
          ? gettext("Key %(key)s: %(fingerprint)s… retired since %(time)s", fields)
          : gettext("Key %(key)s: %(fingerprint)s… current", fields))
          + (now.mine.has(k.key_id) ? gettext(" (this browser)") : "")
          + (now.foreign.includes(k) ? gettext(" (not made in this browser)") : "");
        return item;
      }));
    }
  }

  /* Say loudly that the account lists a key this browser did not make, newer than its own. */
  function warn(panel, foreign) {
    let line = panel.querySelector("[data-player-key-warning]");
    if (!foreign.length) {
      if (line) line.remove();
      return;
    }
    if (!line) {
      line = document.createElement("p");
      line.className = "key-warning";
      line.setAttribute("role", "alert");
      line.dataset.playerKeyWarning = "";
      line.setAttribute("data-testid", "player-key-warning");
      panel.prepend(line);
    }
    line.textContent = foreign.map((k) => gettext("A key you may not have registered was added on %(time)s: key %(key)s (%(fingerprint)s…), which this browser did not make. If it was not you on another device, the casino or someone with your password registered it, and it could sign decisions you never made: keep this page as evidence (save or print it), change your password and make a new key here.",
      { time: window.SotaI18n.time(k.registered_at), key: k.key_id, fingerprint: k.public_key_hex.slice(0, 16) })).join(" ");
  }

  function setup() {
    for (const panel of document.querySelectorAll("[data-player-key]")) {
      const button = panel.querySelector("[data-player-key-make]");
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await register();
        } catch (error) {
          text(panel.querySelector("[data-player-key-status]"), gettext("The key was not registered: %(reason)s", { reason: error.message }));
          button.disabled = false;
          return;
        }
        button.disabled = false;
        await draw(panel);
      });
      draw(panel);
    }
  }

  window.SotaPlayerKey = { supported, status, register, signAction, signBet };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
