/* The player's own signing key (docs/fairness.md, "Decisions the player signs").
 *
 * The browser makes an Ed25519 key with WebCrypto, not extractable, keeps it in IndexedDB and
 * registers its public half (POST /api/v1/me/keys). Once a key is registered, the service takes
 * no decision or move without the player's signature over its action document, so the tables
 * sign every one through signAction(). Where WebCrypto has no Ed25519, the page says so and
 * plays unsigned (a player without a key is not asked to sign).
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
      if (!window.indexedDB) { reject(new Error("this browser keeps no IndexedDB")); return; }
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
      throw new Error(data && data.error ? data.error.message : "the casino answered " + response.status);
    }
    return data;
  }

  /* The player's keys as the casino lists them, and whether this browser holds the one in use. */
  async function status() {
    const listed = await api("GET", "/api/v1/me/keys");
    const current = listed.keys.find((k) => k.key_id === listed.current_key_id) || null;
    let held = false;
    if (current) {
      try {
        held = Boolean(await inStore("readonly", (store) => store.get(current.public_key_hex)));
      } catch (error) {
        held = false;
      }
    }
    return { keys: listed.keys, current, held };
  }

  /* Make a new key in this browser and register it (retiring the one in use, if any). */
  async function register() {
    if (!(await supported())) throw new Error("this browser cannot make Ed25519 keys");
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
    const pair = await inStore("readonly", (store) => store.get(now.current.public_key_hex));
    if (!pair) {
      throw new Error("Your decisions must be signed with key " + now.current.key_id
        + ", which this browser does not hold. Make a new key on the fairness page to go on here.");
    }
    const actionDocument = {
      type: "action", v: 1, game: action.game, round_id: action.round_id,
      seed_pair_id: action.seed_pair_id, nonce: action.nonce, index: action.index, choice: action.choice,
    };
    const bytes = new TextEncoder().encode(window.SotaRecords.canonical(actionDocument));
    const signature = hex(await subtle.sign({ name: "Ed25519" }, pair.privateKey, bytes));
    return { signature, key_id: now.current.key_id };
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
      text(line, "Your keys could not be read: " + error.message);
      return;
    }
    panel.dataset.keyId = now.current ? String(now.current.key_id) : "";
    panel.dataset.held = String(now.held);
    if (!can) {
      text(line, now.current
        ? "This browser cannot sign with Ed25519 (WebCrypto), but your decisions must be signed with key "
          + now.current.key_id + ": play from a browser that holds it, or from one that can make a new key."
        : "This browser cannot make Ed25519 keys (WebCrypto), so your decisions are sent unsigned.");
      button.hidden = true;
      return;
    }
    if (!now.current) {
      text(line, "Your decisions are not signed. Make a key in this browser to sign every decision and move,"
        + " so that no receipt can show a choice you did not make.");
      button.textContent = "Make a signing key";
    } else if (now.held) {
      text(line, "This browser signs your decisions and moves with key " + now.current.key_id + " ("
        + now.current.public_key_hex.slice(0, 16) + "…), registered " + now.current.registered_at + ".");
      button.textContent = "Replace the key";
    } else {
      text(line, "Your decisions must be signed with key " + now.current.key_id
        + ", which this browser does not hold. Make a new key here to replace it (the old one stays listed,"
        + " so what it signed stays checkable).");
      button.textContent = "Make a new key";
    }
    button.hidden = panel.hasAttribute("data-offer-only") && Boolean(now.current && now.held);
    const list = panel.querySelector("[data-player-key-list]");
    if (list) {
      list.replaceChildren(...now.keys.map((k) => {
        const item = document.createElement("li");
        item.textContent = "Key " + k.key_id + ": " + k.public_key_hex.slice(0, 16) + "… " + k.status
          + (k.retired_at ? " since " + k.retired_at : "") + (now.current && k.key_id === now.current.key_id && now.held ? " (this browser)" : "");
        return item;
      }));
    }
  }

  function setup() {
    for (const panel of document.querySelectorAll("[data-player-key]")) {
      const button = panel.querySelector("[data-player-key-make]");
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await register();
        } catch (error) {
          text(panel.querySelector("[data-player-key-status]"), "The key was not registered: " + error.message);
          button.disabled = false;
          return;
        }
        button.disabled = false;
        await draw(panel);
      });
      draw(panel);
    }
  }

  window.SotaPlayerKey = { supported, status, register, signAction };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
