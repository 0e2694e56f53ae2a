/* The casino's public audit log, witnessed from this browser, on every page.
 *
 * Each table, round and fairness page carries the latest signed checkpoint when it was made
 * (the same as GET /api/v1/transparency/checkpoint); this script checks its signature with the
 * key pinned in this browser (records.js), and checks that it and the checkpoint kept here from
 * before are one history: the same root at the same size, or an RFC 6962 consistency proof from
 * the smaller one's root to the larger one's (a smaller one than the kept is no evidence by
 * itself: a cached page or another tab shows one). Only then is the larger one kept. A fork or
 * a checkpoint the service no longer proves is kept as an alarm naming both sizes and roots,
 * shown loudly on the fairness page ([data-log-witness]) until this browser's storage is
 * cleared: it is proof, signed by the casino, that it showed two histories. A bad signature is
 * kept as an alarm too, which proves nothing to anyone else and does not say it does. A
 * checkpoint whose proof cannot be had is remembered as unproven, with why and when, and warned
 * of on every page until a later proof joins it. A larger checkpoint dated before the kept one
 * (the casino's signed times against each other, never this computer's clock) is an alarm too
 * (BACKDATED). Tabs open at once take turns (a Web Lock) to read, check and write
 * what is kept, so that none overwrites what another kept meanwhile.
 *
 * checkAnchors(bundle, keys) is the page verifier's "in the log" check (docs/fairness.md): each
 * document's audit entry, proved into a checkpoint signed by the pinned key (or a key it
 * succeeded by signed key changes), says what the document says, and the pair's commitment was
 * logged before its rounds.
 */
"use strict";

(function () {
  const KEPT = "sota-casino.log-checkpoint.v1";
  const ALARM = "sota-casino.log-alarm.v1";
  const UNPROVEN = "sota-casino.log-unproven.v1";
  /* What earlier versions kept of when this browser was last served the kept checkpoint as the
   * latest, by this computer's clock, to date the next one by: a clock set forward between two
   * pages made an honest casino's next checkpoint look back-dated. Not read; forgotten once a
   * checkpoint is kept. */
  const OLD_SERVED = ["sota-casino.log-served.v2", "sota-casino.log-served.v1"];
  const LOCK = "sota-casino.log-witness";
  /* Checkpoints remembered as unproven at most (a few hundred bytes each): see `unproven`. */
  const UNPROVEN_LIMIT = 100;
  const CHECKPOINT_URL = "/api/v1/transparency/checkpoint";
  const CONSISTENCY_URL = "/api/v1/transparency/consistency";
  /* How long a proof may take: a casino that never answers must not keep the witness (and,
   * through its lock, every other tab's) silent, so no answer in time is a withheld proof. */
  const PROOF_WAIT_SECONDS = 10;
  const subtle = window.crypto && window.crypto.subtle;
  const DECISION_ACTIONS = { casino_war: "round.decision", sota: "round.move" };
  const DECISION_FIELDS = { "round.decision": "choice", "round.move": "cards" };
  const SETTLEMENT_FIELDS = ["receipt", "game", "payout"];
  const BET_FIELDS = ["game", "seed_pair_id", "nonce"];
  const ENTRY_KEYS = ["seq", "time", "actor", "action", "subject", "data"];

  /* What the witness keeps is in IndexedDB: a write completes before the tab's turn (the Web
   * Lock) passes, so the next tab to take its turn reads it. localStorage, where it was kept
   * before, reaches other tabs in the browser's own time, which can be after the turn: a tab
   * could check against a checkpoint one turn old and keep it over a newer one, losing a fork
   * shown between the two. What an earlier version of the page kept there is taken over where
   * nothing is kept yet; where IndexedDB is missing or refused, localStorage serves as before. */
  const DB_NAME = "sota-casino.log-witness";
  const DB_STORE = "kept";
  let opening = null;

  function legacyLoad(name) {
    try {
      const text = window.localStorage.getItem(name);
      return text ? JSON.parse(text) : null;
    } catch (error) {
      return null;
    }
  }

  function legacyForget(name) {
    try {
      window.localStorage.removeItem(name);
    } catch (error) {
      // storage off: nothing was kept
    }
  }

  function legacySave(name, value) {
    try {
      window.localStorage.setItem(name, JSON.stringify(value));
    } catch (error) {
      // storage off: nothing is kept, and the next page checks from scratch
    }
  }

  /* Run `work(store)` in one transaction; its last request's result once the transaction has
   * committed, so that whoever reads next reads what it wrote. */
  function transact(db, mode, work) {
    return new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, mode);
      const request = work(tx.objectStore(DB_STORE));
      tx.oncomplete = () => resolve(request ? request.result : undefined);
      tx.onabort = () => reject(tx.error);
    });
  }

  function openDatabase() {
    return new Promise((resolve) => {
      let request;
      try {
        request = window.indexedDB.open(DB_NAME, 1);
      } catch (error) {
        resolve(null); // no IndexedDB here (or not for this page)
        return;
      }
      request.onupgradeneeded = () => request.result.createObjectStore(DB_STORE);
      request.onsuccess = () => {
        // A later version of the page that changes the store waits for none of these to close.
        request.result.onversionchange = () => request.result.close();
        resolve(request.result);
      };
      request.onerror = () => resolve(null);
    });
  }

  /* Take over what an earlier version kept in localStorage, in one transaction, where this
   * store keeps nothing under that name yet (another tab may have taken it over first). */
  async function adoptLegacy(db) {
    const legacy = [KEPT, ALARM, UNPROVEN].map((name) => [name, legacyLoad(name)]).filter(([, value]) => value !== null);
    if (!legacy.length) return;
    await transact(db, "readwrite", (store) => {
      for (const [name, value] of legacy) {
        const found = store.getKey(name);
        found.onsuccess = () => { if (found.result === undefined) store.put(value, name); };
      }
    });
    legacy.forEach(([name]) => legacyForget(name));
  }

  function database() {
    if (!opening) {
      opening = (window.indexedDB ? openDatabase() : Promise.resolve(null))
        .then(async (db) => { if (db) await adoptLegacy(db); return db; })
        .catch(() => null);
    }
    return opening;
  }

  /* What is kept under `name` (null: nothing). A read that fails throws: the witness then checks
   * nothing, where taking it for "nothing kept" would keep the checkpoint seen over the one kept. */
  async function load(name) {
    const db = await database();
    if (!db) return legacyLoad(name);
    const value = await transact(db, "readonly", (store) => store.get(name));
    return value === undefined ? null : value;
  }

  async function forget(name) {
    const db = await database();
    if (!db) return legacyForget(name);
    return transact(db, "readwrite", (store) => { store.delete(name); }).catch(() => undefined);
  }

  async function save(name, value) {
    const db = await database();
    if (!db) return legacySave(name, value);
    // A full disk keeps nothing, and the next page checks from scratch, as without storage.
    return transact(db, "readwrite", (store) => { store.put(value, name); }).catch(() => undefined);
  }

  const isHex64 = (value) => typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
  const canonical = (value) => window.SotaRecords.canonical(value);

  function hexToBytes(hex) {
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }

  function bytesToHex(bytes) {
    return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function join(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  async function sha256(bytes) {
    return new Uint8Array(await subtle.digest("SHA-256", bytes));
  }

  const leafHash = (data) => sha256(join(Uint8Array.of(0), data));
  const nodeHash = (left, right) => sha256(join(Uint8Array.of(1), left, right));
  const equal = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

  /* RFC 9162 §2.1.3.2: does the proof lead from leaf `index` of a tree of `size` to `root`? */
  async function verifyInclusion(index, size, leafData, proof, root) {
    if (!(Number.isInteger(index) && Number.isInteger(size) && index >= 0 && index < size)) return false;
    let fn = index;
    let sn = size - 1;
    let r = await leafHash(leafData);
    for (const p of proof) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        r = await nodeHash(p, r);
        if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      } else {
        r = await nodeHash(r, p);
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    return sn === 0 && equal(r, root);
  }

  /* RFC 9162 §2.1.4.2: is the tree (oldSize, oldRoot) a prefix of (newSize, newRoot)? */
  async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
    if (!(oldSize >= 1 && oldSize <= newSize)) return false;
    if (oldSize === newSize) return equal(oldRoot, newRoot) && proof.length === 0;
    if (!proof.length) return false;
    const nodes = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : proof.slice();
    let fn = oldSize - 1;
    let sn = newSize - 1;
    while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    let fr = nodes[0];
    let sr = nodes[0];
    for (const c of nodes.slice(1)) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        fr = await nodeHash(c, fr);
        sr = await nodeHash(c, sr);
        if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      } else {
        sr = await nodeHash(sr, c);
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
  }

  /* Whether `key` (a CryptoKey, or null for a weak key: it signs nothing) signed `signed`. */
  async function signedBy(key, signed) {
    if (key === null) return false;
    try {
      const data = window.SotaRecords.canonicalBytes(signed.document);
      return await subtle.verify({ name: "Ed25519" }, key, hexToBytes(signed.signature), data);
    } catch (error) {
      return false;
    }
  }

  /* Whether `signed` is a checkpoint of the scheme, its time included: one dated in another
   * form (`…T13:00:00Z`) dates nothing, and would keep a round left out of the log "not yet
   * anchored" past the bound (the offline verifier's `checkpoint_shape_problem`). */
  function isCheckpoint(signed) {
    const doc = signed && signed.document;
    return Boolean(doc && doc.type === "checkpoint" && doc.v === 1 && Number.isInteger(doc.size)
      && doc.size >= 0 && isHex64(doc.root) && timeParts(doc.time) !== null
      && typeof signed.signature === "string");
  }

  const described = (doc) => N_("size %(size)s root %(root)s", { size: doc.size, root: doc.root });
  const dated = (doc) => N_("size %(size)s root %(root)s at %(time)s", { size: doc.size, root: doc.root, time: doc.time });
  const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

  /* Whether of two signed checkpoint documents the one over more entries is dated before the one
   * over fewer, or one tree (size and root) is dated twice: the service signs a checkpoint over
   * the whole log as it is then, once per size, so a later one is never older. A casino that
   * dated its new checkpoints back could keep every one before the bound of a round it left out
   * of its log (docs/fairness.md). The times are of one fixed form, so their text orders them. */
  function backdated(a, b) {
    if (!TIME.test(a.time) || !TIME.test(b.time)) return false; // no time to judge by
    const [smaller, larger] = a.size <= b.size ? [a, b] : [b, a];
    if (smaller.size === larger.size) return smaller.root === larger.root && smaller.time !== larger.time;
    return larger.time < smaller.time;
  }

  /* Why each of the checkpoint documents (signed, well formed) dated before one over fewer
   * entries fails: the service signs each over the whole log as it is then, so one over more
   * entries is never older (the offline verifier's `backdated_checkpoints`, in its order). */
  function backdatedCheckpoints(docs) {
    const problems = [];
    let latest = null; // the latest dated of those over fewer entries
    const bySize = [...docs].sort((a, b) => a.size - b.size);
    for (let start = 0; start < bySize.length;) {
      let end = start;
      while (end < bySize.length && bySize[end].size === bySize[start].size) end += 1;
      const same = new Map(bySize.slice(start, end).map((doc) => [doc.root + " " + doc.time, doc]));
      for (const doc of same.values()) {
        if (latest && doc.time < latest.time) {
          problems.push(gettext("the signed checkpoint of size %(size)s (root %(root)s) is dated %(time)s, before the one of size %(earlier_size)s (root %(earlier_root)s) at %(earlier_time)s, over fewer entries: one of them back-dates the log",
            { size: doc.size, root: doc.root, time: doc.time, earlier_size: latest.size, earlier_root: latest.root, earlier_time: latest.time }));
        }
      }
      const newest = [...same.values()].reduce((a, b) => (b.time > a.time ? b : a));
      if (!latest || newest.time > latest.time) latest = newest;
      start = end;
    }
    return problems;
  }

  /* The scheme's bound (docs/fairness.md, "The bound"): an honest service has a settled round's
   * bet and settlement entries in a signed checkpoint within an hour after its `settled_at`, and
   * a pair's commitment (reveal) entry within an hour after its `created_at` (`revealed_at`). */
  const ANCHOR_BOUND_SECONDS = 3600;

  /* A time of the fixed form as [whole seconds since 1970, microseconds], or null if it is not
   * one or names no real moment (a 30 February, an hour 24), as Python's reading refuses it. */
  function timeParts(text) {
    if (typeof text !== "string" || !TIME.test(text)) return null;
    const [year, month, day, hour, minute, second] = text.slice(0, 19).split(/[-T:]/).map(Number);
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(hour, minute, second, 0);
    const same = year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1
      && date.getUTCDate() === day && date.getUTCHours() === hour
      && date.getUTCMinutes() === minute && date.getUTCSeconds() === second;
    return same ? [date.getTime() / 1000, Number(text.slice(20, 26))] : null;
  }

  /* The latest of the checkpoint documents (their signatures checked) dated past `settledAt`
   * and the bound, or null: the one a round still pending is not in, though an honest service
   * would have put it there (the offline verifier's `past_the_bound`). */
  function pastTheBound(settledAt, docs) {
    const settled = timeParts(settledAt);
    if (!settled) return null;
    let latest = null;
    for (const doc of docs) {
      const time = timeParts(doc.time);
      if (!time) continue;
      if (!pastBound(settled, time)) continue;
      const later = latest === null || time[0] > latest.time[0]
        || (time[0] === latest.time[0] && (time[1] > latest.time[1] || (time[1] === latest.time[1] && doc.size > latest.doc.size)));
      if (later) latest = { time, doc };
    }
    return latest && latest.doc;
  }

  /* The one over the most entries of the checkpoint documents (their signatures checked) that
   * covers the entry at `seq`, or null: a checkpoint over `size` entries holds the entries
   * 1 .. size (the offline verifier's `covering_checkpoint`). */
  function coveringCheckpoint(seq, docs) {
    if (!Number.isInteger(seq) || seq < 0) return null;
    return docs.filter((doc) => Number.isInteger(doc.size) && doc.size >= seq)
      .reduce((a, b) => (a === null || b.size > a.size ? b : a), null);
  }

  /* A signed checkpoint holds all the log took before its last entry, so an honest bundle anchors
   * a document in the checkpoint that holds an entry the log takes after it: listed as pending
   * beside such an anchor, the document was left out of the log. These say why, or give null. */

  /* The commitment (`pairDoc`): the log takes it before every entry of its rounds and the
   * reveal; with none of them anchored, it is held to the bound. */
  function leftOutCommitment(pairDoc, betted, settled, decided, revealed, result) {
    const rounds = [...Object.entries(betted), ...Object.entries(settled),
      ...Object.entries(decided).flatMap(([id, anchors]) => anchors.map((anchor) => [id, anchor]))];
    const [id, first] = rounds.reduce((a, b) => (a[1] === null || b[1].leaf_index < a[1].leaf_index ? b : a), [null, null]);
    if (first) {
      result.problems.push(gettext("the commitment is listed as pending, though the signed log holds an entry of round %(round)s at leaf %(leaf)s, which the log takes after it: the commitment was left out of the log",
        { round: id, leaf: first.leaf_index }));
    } else if (revealed) {
      result.problems.push(gettext("the commitment is listed as pending, though the signed log holds the pair's reveal at leaf %(leaf)s, which the log takes after it: the commitment was left out of the log",
        { leaf: revealed.leaf_index }));
    }
    return first || revealed ? false : pendingDated("commitment", pairDoc, result);
  }

  /* The anchored bets of the bundle's rounds with the nonces they were dealt with. */
  function anchoredBets(rounds, betted) {
    return rounds.map((signed) => signed.document)
      .filter((receipt) => betted[roundKey(receipt.round_id)] && Number.isInteger(receipt.nonce))
      .map((receipt) => ({ id: receipt.round_id, nonce: receipt.nonce, leaf: betted[roundKey(receipt.round_id)].leaf_index }));
  }

  /* The anchored bet (of `bets`, anchoredBets) of a lower nonce than the receipt's that the log
   * took after the receipt's own bet at `leaf`, the first so logged, or null: a pair's nonces
   * are taken in order under the player's lock, each with its bet logged, so a casino that dealt
   * a later bet an earlier nonce chose its cards (verify/anchors.py, _dealt_out_of_order). */
  function dealtOutOfOrder(receipt, leaf, bets) {
    if (!Number.isInteger(receipt.nonce)) return null;
    return bets.filter((bet) => bet.nonce < receipt.nonce && bet.leaf > leaf)
      .reduce((a, b) => (a === null || b.leaf < a.leaf ? b : a), null);
  }

  /* A round without its settlement anchored: the log takes a pair's bets in the order of their
   * nonces (`bets`: the anchored ones, if its own bet is not), and every round before the
   * pair's reveal. */
  function leftOutRound(receipt, bets, revealed) {
    const later = bets.filter((bet) => Number.isInteger(receipt.nonce) && bet.nonce > receipt.nonce)
      .reduce((a, b) => (a === null || b.leaf < a.leaf ? b : a), null);
    if (later) {
      return gettext("round %(round)s: listed as pending, though the signed log holds the bet of round %(later)s (nonce %(nonce)s) at leaf %(leaf)s, which the log takes after this round's bet: the round was left out of the log",
        { round: receipt.round_id, later: later.id, nonce: later.nonce, leaf: later.leaf });
    }
    if (revealed) {
      return gettext("round %(round)s: listed as pending, though the signed log holds the pair's reveal at leaf %(leaf)s, which the log takes after every round: the round was left out of the log",
        { round: receipt.round_id, leaf: revealed.leaf_index });
    }
    return null;
  }

  /* This computer's clock in the scheme's time form, YYYY-MM-DDTHH:MM:SS.ffffffZ, as the offline
   * verifier writes it (the browser's clock counts milliseconds). */
  function written(moment) {
    return moment.toISOString().replace(/Z$/, "000Z");
  }

  const nowWritten = () => written(new Date());

  /* What the bound runs from for each document that can be pending (core/anchors.py DATED_BY):
   * its signed time, and why it fails dated past this computer's clock and the bound (`ahead`),
   * or past the time this browser fetched the bundle and the bound (`fetchedAhead`), or not in
   * a checkpoint dated past its time and the bound (`leftOut`), or still pending in a bundle
   * fetched past them (`fetched`). The commitment and the reveal may have nothing after them in
   * the log (a pair never played; the reveal always), so the bound alone shows either left out;
   * so may a player's key registration, kept pending for good else. What is pending as its audit
   * entry, carrying its place in the log (a key registration's seq), fails whatever its dates
   * once a signed checkpoint covers that place (`covered`). */
  const DATED_BY = {
    round: {
      name: "settled_at",
      ahead: (doc, now) => gettext("round %(round)s: settled at %(settled)s, past this computer's clock (%(now)s) and the bound of 1 hour: the receipt is dated ahead, which would keep a round left out of the log within the bound",
        { round: doc.round_id, settled: doc.settled_at, now }),
      fetchedAhead: (doc, fetched) => gettext("round %(round)s: settled at %(settled)s, past the time the bundle was fetched (%(fetched)s, by this computer's clock) and the bound of 1 hour: the receipt is dated ahead, which would keep a round left out of the log within the bound",
        { round: doc.round_id, settled: doc.settled_at, fetched }),
      leftOut: (doc, past) => gettext("round %(round)s: settled at %(settled)s, not in the checkpoint signed at %(time)s (size %(size)s), past the bound of 1 hour: the round was left out of the log",
        { round: doc.round_id, settled: doc.settled_at, time: past.time, size: past.size }),
      fetched: (doc, fetched) => gettext("round %(round)s: settled at %(settled)s, still pending in the bundle fetched at %(fetched)s by this computer's clock, past the bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is fetched, so the round was left out of the log, or the log's checkpoints were withheld",
        { round: doc.round_id, settled: doc.settled_at, fetched }),
    },
    commitment: {
      name: "created_at",
      ahead: (doc, now) => gettext("the commitment: created at %(created)s, past this computer's clock (%(now)s) and the bound of 1 hour: the commitment is dated ahead, which would keep it left out of the log within the bound",
        { created: doc.created_at, now }),
      fetchedAhead: (doc, fetched) => gettext("the commitment: created at %(created)s, past the time the bundle was fetched (%(fetched)s, by this computer's clock) and the bound of 1 hour: the commitment is dated ahead, which would keep it left out of the log within the bound",
        { created: doc.created_at, fetched }),
      leftOut: (doc, past) => gettext("the commitment: created at %(created)s, not in the checkpoint signed at %(time)s (size %(size)s), past the bound of 1 hour: it was left out of the log",
        { created: doc.created_at, time: past.time, size: past.size }),
      fetched: (doc, fetched) => gettext("the commitment: created at %(created)s, still pending in the bundle fetched at %(fetched)s by this computer's clock, past the bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is fetched, so it was left out of the log, or the log's checkpoints were withheld",
        { created: doc.created_at, fetched }),
    },
    reveal: {
      name: "revealed_at",
      ahead: (doc, now) => gettext("the reveal: revealed at %(revealed)s, past this computer's clock (%(now)s) and the bound of 1 hour: the reveal is dated ahead, which would keep it left out of the log within the bound",
        { revealed: doc.revealed_at, now }),
      fetchedAhead: (doc, fetched) => gettext("the reveal: revealed at %(revealed)s, past the time the bundle was fetched (%(fetched)s, by this computer's clock) and the bound of 1 hour: the reveal is dated ahead, which would keep it left out of the log within the bound",
        { revealed: doc.revealed_at, fetched }),
      leftOut: (doc, past) => gettext("the reveal: revealed at %(revealed)s, not in the checkpoint signed at %(time)s (size %(size)s), past the bound of 1 hour: it was left out of the log",
        { revealed: doc.revealed_at, time: past.time, size: past.size }),
      fetched: (doc, fetched) => gettext("the reveal: revealed at %(revealed)s, still pending in the bundle fetched at %(fetched)s by this computer's clock, past the bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is fetched, so it was left out of the log, or the log's checkpoints were withheld",
        { revealed: doc.revealed_at, fetched }),
    },
    // A player's key registration, dated by its audit entry's time: `doc` is {n, seq, time},
    // its place in the bundle's player_keys, its entry's seq and time.
    registration: {
      name: "time",
      covered: (doc, checkpoint) => gettext("key registration #%(n)s (entry %(seq)s): pending, though the checkpoint signed at %(time)s (size %(size)s) covers entry %(seq)s: a signed checkpoint holds every entry up to its size, and the service anchors them in it, so it was left out of the log, or its anchor was withheld",
        { n: doc.n, seq: doc.seq, time: checkpoint.time, size: checkpoint.size }),
      ahead: (doc, now) => gettext("key registration #%(n)s (entry %(seq)s): registered at %(registered)s, past this computer's clock (%(now)s) and the bound of 1 hour: the registration is dated ahead, which would keep it left out of the log within the bound",
        { n: doc.n, seq: doc.seq, registered: doc.time, now }),
      fetchedAhead: (doc, fetched) => gettext("key registration #%(n)s (entry %(seq)s): registered at %(registered)s, past the time the bundle was fetched (%(fetched)s, by this computer's clock) and the bound of 1 hour: the registration is dated ahead, which would keep it left out of the log within the bound",
        { n: doc.n, seq: doc.seq, registered: doc.time, fetched }),
      leftOut: (doc, past) => gettext("key registration #%(n)s (entry %(seq)s): registered at %(registered)s, not in the checkpoint signed at %(time)s (size %(size)s), past the bound of 1 hour: it was left out of the log",
        { n: doc.n, seq: doc.seq, registered: doc.time, time: past.time, size: past.size }),
      fetched: (doc, fetched) => gettext("key registration #%(n)s (entry %(seq)s): registered at %(registered)s, still pending in the bundle fetched at %(fetched)s by this computer's clock, past the bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is fetched, so it was left out of the log, or the log's checkpoints were withheld",
        { n: doc.n, seq: doc.seq, registered: doc.time, fetched }),
    },
  };

  /* Whether the time `later` ([seconds, microseconds], timeParts) is past `dated` and the bound. */
  function pastBound(dated, later) {
    const after = later[0] - dated[0];
    return after > ANCHOR_BOUND_SECONDS || (after === ANCHOR_BOUND_SECONDS && later[1] > dated[1]);
  }

  /* A document of `kind` (DATED_BY) the service lists as pending: "pending" within the bound,
   * else false with why. Every checkpoint of the bundle signed by the pinned key
   * (`result.checkpoints`) dates the bound, also one that another of its size follows in the
   * list; so does the time this browser fetched the bundle (`result.fetchedAt`, by its own
   * clock, when it fetched it itself), since the service signs a checkpoint over the whole
   * log when a bundle is fetched (core/anchors.py, pending_when_fetched). `doc` is the
   * round's receipt, the commitment or the reveal, or a key registration as DATED_BY names it;
   * `result` holds the signed `checkpoints`, `fetchedAt` and the `problems` to add to. */
  function pendingDated(kind, doc, result) {
    const dated = DATED_BY[kind];
    const checkpoints = result.checkpoints.map((signed) => signed.document);
    // An entry the service anchors once a checkpoint covers it (core/anchors.py, covered_message).
    const covering = dated.covered && doc ? coveringCheckpoint(doc.seq, checkpoints) : null;
    if (covering) {
      result.problems.push(dated.covered(doc, covering));
      return false;
    }
    const datedAt = doc ? doc[dated.name] : undefined;
    // The bound runs from a time the casino writes: dated ahead, a document left out of the log
    // would stay within it, but no casino makes one past this computer's clock.
    const time = timeParts(datedAt);
    if (time && time[0] + time[1] / 1e6 > Date.now() / 1000 + ANCHOR_BOUND_SECONDS) {
      result.problems.push(dated.ahead(doc, nowWritten()));
      return false;
    }
    // Nor one past the time this browser fetched the bundle (core/anchors.py, fetched_before).
    const fetched = timeParts(result.fetchedAt);
    if (time && fetched && pastBound(fetched, time)) {
      result.problems.push(dated.fetchedAhead(doc, result.fetchedAt));
      return false;
    }
    const past = pastTheBound(datedAt, checkpoints);
    if (past) {
      result.problems.push(dated.leftOut(doc, past));
      return false;
    }
    if (!time || !fetched || !pastBound(time, fetched)) return "pending";
    result.problems.push(dated.fetched(doc, result.fetchedAt));
    return false;
  }

  // ---- anchors -------------------------------------------------------------------------------

  /* A round id as the key of an object: JSON's 101 is not "101" nor [101], though an object
   * takes each of them for the key "101", and an anchor labelled so would stand for round 101
   * (the offline verifier keeps them apart, verify/anchors.py `_id`). */
  const roundKey = (id) => (typeof id === "number" ? String(id) : "~" + JSON.stringify(id));

  async function entryHash(entry) {
    const fields = {};
    for (const name of ENTRY_KEYS) fields[name] = entry[name];
    let body;
    try {
      body = window.SotaRecords.canonicalBytes(fields);
    } catch (error) {
      return null; // no bytes of the scheme: the entry hashes to nothing it can show
    }
    return bytesToHex(await sha256(join(hexToBytes(entry.prev_hash), body)));
  }

  const isObject = (value) => Boolean(value) && typeof value === "object" && !Array.isArray(value);
  const isTextOrNull = (value) => value === null || typeof value === "string";

  /* What is malformed in an audit entry with its links, as the log's own check has it and in
   * its words (the offline verifier's `entry_shape_problem`), or null: its seq an integer, not
   * `true` (`true - 1` is 0), its time of the scheme's form, its actor and subject text or
   * null, its action text, its data an object. A casino holding the key signs a checkpoint over
   * any tree, so an entry the whole log's check refuses must prove nothing here, where no one
   * reads the rest of the log. */
  function entryShapeProblem(entry) {
    if (!isObject(entry)) return gettext("is not an object");
    const missing = [...ENTRY_KEYS, "prev_hash", "hash"].filter((name) => !(name in entry));
    if (missing.length) return gettext("lacks %(fields)s", { fields: missing.join(", ") });
    if (!Number.isInteger(entry.seq)) return gettext("has a seq that is not an integer");
    if (timeParts(entry.time) === null) return gettext("has a time not written as YYYY-MM-DDTHH:MM:SS.ffffffZ");
    const name = ["actor", "subject"].find((field) => !isTextOrNull(entry[field]));
    if (name) return gettext("has an %(field)s that is neither a string nor null", { field: name });
    if (typeof entry.action !== "string" || entry.action === "") return gettext("has no action");
    if (!isObject(entry.data)) return gettext("has data that is not an object");
    const link = ["prev_hash", "hash"].find((field) => !isHex64(entry[field]));
    if (link) return gettext("has a %(field)s that is not 64 lower-case hex digits", { field: link });
    return null;
  }

  const isAuditEntry = (entry) => entryShapeProblem(entry) === null;

  /* Why an anchor does not prove its entry into the checkpoint document, or null. */
  async function proofProblem(anchor, checkpoint) {
    if (!anchor || typeof anchor !== "object") return gettext("the anchor is not an object");
    const entry = anchor.entry;
    const shape = entryShapeProblem(entry);
    if (shape) return gettext("the anchor's entry is not a whole audit entry: it %(shape)s", { shape });
    if (!Array.isArray(anchor.proof) || !anchor.proof.every(isHex64)) return gettext("the inclusion proof is not a list of hashes");
    if (anchor.leaf_index !== entry.seq - 1) return gettext("its leaf index is not the entry's seq - 1");
    if ((await entryHash(entry)) !== entry.hash) return gettext("the entry's hash does not match its contents");
    const ok = await verifyInclusion(anchor.leaf_index, checkpoint.size, hexToBytes(entry.hash),
      anchor.proof.map(hexToBytes), hexToBytes(checkpoint.root));
    return ok ? null : ngettext("the inclusion proof of leaf %(leaf)s does not lead to the root of the checkpoint over %(num)s entry",
      "the inclusion proof of leaf %(leaf)s does not lead to the root of the checkpoint over %(num)s entries", checkpoint.size,
      { leaf: anchor.leaf_index });
  }

  async function receiptProblem(settlement, decisions, receipt) {
    const data = settlement.data || {};
    if (settlement.action !== "round.settled" || settlement.subject !== ["round", receipt.round_id].join(":")) return gettext("its settlement entry is of another round");
    // An entry that leaves out the receipt's hash, game or payout anchors no receipt at all.
    if (!SETTLEMENT_FIELDS.every((name) => name in data)) return gettext("its settlement entry does not name the receipt's hash, game and payout");
    let hashed = null;
    try {
      hashed = bytesToHex(await sha256(window.SotaRecords.canonicalBytes(receipt)));
    } catch (error) {
      // A receipt with no canonical bytes is named by no entry's hash.
    }
    if (data.receipt !== hashed) {
      return gettext("the log recorded another receipt for this round: the receipt was rewritten");
    }
    if (data.game !== receipt.game) {
      return gettext("the log recorded game %(logged)s, the receipt says %(receipt)s", { logged: data.game, receipt: receipt.game });
    }
    if (data.payout !== receipt.payout) {
      return gettext("the log recorded payout %(logged)s, the receipt says %(receipt)s", { logged: data.payout, receipt: receipt.payout });
    }
    const action = DECISION_ACTIONS[receipt.game];
    const logged = decisions.map((d) => (d.action === action && d.subject === settlement.subject && d.data ? d.data[DECISION_FIELDS[action]] : null));
    if (canonical(logged) !== canonical(receipt.actions)) {
      return gettext("the log recorded the player's actions %(logged)s, the receipt lists %(receipt)s: the round was rewritten",
        { logged: JSON.stringify(logged), receipt: JSON.stringify(receipt.actions) });
    }
    return null;
  }

  /* How a round's bet entry contradicts its receipt: it names the pair and nonce the cards were
   * drawn with, so a round logged again under a new id must name another pair's, or a nonce
   * the whole log shows taken twice. */
  function betProblem(bet, receipt) {
    const data = bet.data || {};
    if (bet.action !== "round.bet" || bet.subject !== ["round", receipt.round_id].join(":")) return gettext("its bet entry is of another round");
    for (const name of BET_FIELDS) {
      if (!(name in data)) return gettext("its bet entry names no %(name)s", { name });
      if (data[name] !== receipt[name]) {
        return gettext("the log recorded the bet with %(name)s %(logged)s, the receipt says %(receipt)s: the round was logged again",
          { name, logged: JSON.stringify(data[name]), receipt: JSON.stringify(receipt[name]) });
      }
    }
    return null;
  }

  /* Why a document's anchor does not hold, as one sentence naming the document and its kind. */
  function anchorProblem(of, problem) {
    if (of.kind === "commitment") return gettext("the commitment: its anchor does not hold: %(problem)s", { problem });
    if (of.kind === "reveal") return gettext("the reveal: its anchor does not hold: %(problem)s", { problem });
    const params = { round: of.round_id, problem };
    if (of.kind === "decision") return gettext("round %(round)s: its decision anchor does not hold: %(problem)s", params);
    if (of.kind === "bet") return gettext("round %(round)s: its bet anchor does not hold: %(problem)s", params);
    return gettext("round %(round)s: its settlement anchor does not hold: %(problem)s", params);
  }

  /* The service logs a pair's commitment and reveal once, and a round's bet and settlement once:
   * two different entries anchored for one of them say it was committed, revealed, bet or settled
   * twice (core/anchors.py, anchored_twice), naming both leaves. */
  function anchoredTwice(of, first, second) {
    const params = { round: of.round_id, first: Math.min(first, second), second: Math.max(first, second) };
    if (of.kind === "commitment") return gettext("the commitment: two commitment entries are anchored, at leaf %(first)s and at leaf %(second)s: the service logs one, so the pair was committed twice", params);
    if (of.kind === "reveal") return gettext("the reveal: two reveal entries are anchored, at leaf %(first)s and at leaf %(second)s: the service logs one, so the pair was revealed twice", params);
    if (of.kind === "bet") return gettext("round %(round)s: two bet entries are anchored, at leaf %(first)s and at leaf %(second)s: the service logs one, so the round was bet twice", params);
    return gettext("round %(round)s: two settlement entries are anchored, at leaf %(first)s and at leaf %(second)s: the service logs one, so the round was settled twice", params);
  }

  /* Where in the log a problem of an anchored document was found. */
  function inCheckpoint(seq, size) {
    return ngettext("entry %(seq)s, in the checkpoint over %(num)s entry signed by the pinned key",
      "entry %(seq)s, in the checkpoint over %(num)s entries signed by the pinned key", size, { seq });
  }

  /* The reveal's entry (the rotation) must name its server seed and rounds, and follow every
   * round of the pair in the log: a reveal re-signed with fewer rounds would hide the last. */
  function checkReveal(reveal, anchor, lastLeaf, pending, result) {
    if (result.reveal === false) return;
    if (!anchor) {
      if (pending.has("reveal")) {
        result.reveal = pendingDated("reveal", reveal, result);
      } else {
        result.reveal = false;
        result.problems.push(gettext("the bundle carries no anchor of the reveal in the log"));
      }
      return;
    }
    const entry = anchor.entry;
    const data = entry.data || {};
    result.reveal = entry.action === "seed_pair.rotated" && entry.subject === ["seed_pair", reveal.seed_pair_id].join(":")
      && data.server_seed === reveal.server_seed && data.rounds === reveal.rounds && entry.actor === ["user", reveal.user_id].join(":");
    const where = inCheckpoint(entry.seq, anchor.checkpoint_size);
    if (!result.reveal && data.rounds !== reveal.rounds) {
      result.problems.push(ngettext("the log recorded %(num)s round when the pair was revealed, the reveal says %(rounds)s (%(where)s)",
        "the log recorded %(num)s rounds when the pair was revealed, the reveal says %(rounds)s (%(where)s)",
        Number(data.rounds), { num: data.rounds, rounds: reveal.rounds, where }));
    } else if (!result.reveal) {
      result.problems.push(gettext("the log recorded another reveal of this pair (%(where)s)", { where }));
    }
    if (lastLeaf !== null && anchor.leaf_index <= lastLeaf) {
      result.reveal = false;
      result.problems.push(gettext("the pair's reveal was logged at leaf %(reveal)s, before its round at leaf %(last)s",
        { reveal: anchor.leaf_index, last: lastLeaf }));
    }
  }

  /* Whether one of `keys` (CryptoKeys) signed `signed`. */
  async function signedByAny(keys, signed) {
    for (const key of keys) if (await signedBy(key, signed)) return true;
    return false;
  }

  /* The bundle's anchors checked against its documents, with the pinned key and the keys the
   * bundle's signed key changes show it to succeed (CryptoKeys, the checked key first: a
   * checkpoint signed before a key change is signed by the key it retired). Each document is
   * true (proved in the log), false (contradicted, or not anchored) or "pending" (listed in
   * pending_anchors: not proven yet). A bundle without an anchors list proves none of its
   * documents: every one is false, whatever pending_anchors says. `fetchedAt`, when this
   * browser fetched the bundle by its own clock (YYYY-MM-DDTHH:MM:SS.ffffffZ), or undefined for
   * a bundle it did not fetch itself: a document still pending then, past the bound, fails. */
  async function checkAnchors(bundle, keys, fetchedAt) {
    const result = { problems: [], rounds: {}, commitment: null, reveal: null, checkpoints: [], fetchedAt };
    const listed = Array.isArray(bundle.anchors) ? bundle.anchors : null;
    const waiting = listed && Array.isArray(bundle.pending_anchors) ? bundle.pending_anchors : [];
    if (!listed || (!listed.length && !waiting.length)) {
      result.problems.push(gettext("unanchored: the bundle proves none of its documents in the signed log"));
    }
    // By size, a number: an object would take an anchor's "16" or [16] for the size 16.
    const checkpoints = new Map();
    for (const signed of Array.isArray(bundle.checkpoints) ? bundle.checkpoints : []) {
      if (isCheckpoint(signed) && (await signedByAny(keys, signed))) {
        // The service signs one checkpoint a size: two that differ fork or back-date the log.
        const twin = checkpoints.get(signed.document.size);
        if (twin && (twin.root !== signed.document.root || twin.time !== signed.document.time)) {
          result.problems.push(ngettext("two signed checkpoints over %(num)s entry differ: root %(first)s at %(first_time)s, root %(second)s at %(second_time)s: one of them forks or back-dates the log",
            "two signed checkpoints over %(num)s entries differ: root %(first)s at %(first_time)s, root %(second)s at %(second_time)s: one of them forks or back-dates the log",
            twin.size, { first: twin.root, first_time: twin.time, second: signed.document.root, second_time: signed.document.time }));
        }
        checkpoints.set(signed.document.size, signed.document);
        result.checkpoints.push(signed);
      } else if (!isCheckpoint(signed)) {
        result.problems.push(gettext("a checkpoint of the bundle is not a checkpoint document with a size, a root and a time written as YYYY-MM-DDTHH:MM:SS.ffffffZ"));
      } else {
        result.problems.push(gettext("a checkpoint of the bundle is not signed by the pinned key"));
      }
    }
    result.problems.push(...backdatedCheckpoints(result.checkpoints.map((signed) => signed.document)));
    const PAIR_PLACES = { commitment: "pair", reveal: "reveal" };
    const pending = new Set(waiting.map((p) => PAIR_PLACES[p && p.of && p.of.kind] || "round:" + roundKey(p && p.of && p.of.round_id)));
    const betted = {};
    const settled = {};
    const decided = {};
    let commitment = null;
    let revealed = null;
    const twice = new Map(); // by place ("pair", "reveal", "round:KEY"): why it is anchored twice
    for (const anchor of listed || []) {
      const of = (anchor && anchor.of) || {};
      const checkpoint = anchor ? checkpoints.get(anchor.checkpoint_size) : undefined;
      const problem = checkpoint ? await proofProblem(anchor, checkpoint) : gettext("it names no checkpoint signed by the pinned key");
      if (problem) {
        result.problems.push(anchorProblem(of, problem));
        if (of.kind === "commitment") result.commitment = false;
        else if (of.kind === "reveal") result.reveal = false;
        else result.rounds[roundKey(of.round_id)] = false;
        continue;
      }
      // A document logged once keeps the first anchor listed; another entry anchored for it fails it.
      const first = of.kind === "commitment" ? commitment : of.kind === "reveal" ? revealed
        : of.kind === "bet" ? betted[roundKey(of.round_id)] : of.kind === "settlement" ? settled[roundKey(of.round_id)] : null;
      if (first) {
        if (first.leaf_index !== anchor.leaf_index || first.entry.hash !== anchor.entry.hash) {
          const place = PAIR_PLACES[of.kind] || "round:" + roundKey(of.round_id);
          twice.set(place, [...(twice.get(place) || []), anchoredTwice(of, first.leaf_index, anchor.leaf_index)]);
        }
      } else if (of.kind === "commitment") commitment = anchor;
      else if (of.kind === "reveal") revealed = anchor;
      else if (of.kind === "bet") betted[roundKey(of.round_id)] = anchor;
      else if (of.kind === "settlement") settled[roundKey(of.round_id)] = anchor;
      else if (of.kind === "decision") (decided[roundKey(of.round_id)] = decided[roundKey(of.round_id)] || []).push(anchor);
    }
    const pairDoc = bundle.commitment.document;
    if (commitment && result.commitment !== false) {
      const entry = commitment.entry;
      const fits = entry.action === "seed_pair.created" && entry.subject === ["seed_pair", pairDoc.seed_pair_id].join(":")
        && entry.data && entry.data.commitment === pairDoc.commitment && entry.actor === ["user", pairDoc.user_id].join(":");
      result.commitment = fits;
      if (!fits) {
        result.problems.push(gettext("the log recorded commitment %(logged)s… for this pair, the commitment document names %(named)s… (%(where)s)", {
          logged: String(entry.data && entry.data.commitment).slice(0, 16),
          named: String(pairDoc.commitment).slice(0, 16),
          where: inCheckpoint(entry.seq, commitment.checkpoint_size),
        }));
      }
    } else if (result.commitment === null) {
      result.commitment = pending.has("pair") ? leftOutCommitment(pairDoc, betted, settled, decided, revealed, result) : false;
      if (result.commitment === false && !pending.has("pair")) result.problems.push(gettext("the bundle carries no anchor of the commitment in the log"));
    }
    const laterBets = anchoredBets(bundle.rounds, betted);
    let firstLeaf = null;
    let lastLeaf = null;
    for (const signed of bundle.rounds) {
      const receipt = signed.document;
      const id = receipt.round_id;
      const key = roundKey(id);
      if (result.rounds[key] === false) continue;
      const settlement = settled[key];
      if (!settlement) {
        if (pending.has("round:" + key)) {
          const later = leftOutRound(receipt, betted[key] ? [] : laterBets, revealed);
          if (later) result.problems.push(later);
          result.rounds[key] = later ? false : pendingDated("round", receipt, result);
        } else {
          result.rounds[key] = false;
          result.problems.push(gettext("round %(round)s: the bundle carries no anchor of it in the log", { round: id }));
        }
        continue;
      }
      // The player's actions in the order the log took them, not the order the anchors' labels
      // claim; an entry anchored twice stands for one action only (the other names nothing).
      const decisions = (decided[key] || []).sort((a, b) => a.leaf_index - b.leaf_index);
      const entries = decisions.map((d, i) => (i && d.leaf_index === decisions[i - 1].leaf_index ? {} : d.entry));
      const problem = await receiptProblem(settlement.entry, entries, receipt);
      const late = decisions.some((d) => d.leaf_index > settlement.leaf_index);
      const bet = betted[key];
      const betFault = bet ? betProblem(bet.entry, receipt) : null;
      const betLate = bet && [settlement, ...decisions].some((a) => a.leaf_index <= bet.leaf_index);
      const dealt = bet ? dealtOutOfOrder(receipt, bet.leaf_index, laterBets) : null;
      // Not anchored beside an anchored settlement: the log takes the bet first, so it was left
      // out of the log, also where the service lists it as pending.
      const betPending = !bet && pending.has("round:" + key);
      if (betPending) {
        result.problems.push(gettext("round %(round)s: its bet is listed as pending, though the signed log holds its settlement at leaf %(leaf)s, which the log takes after the bet: the bet was left out of the log",
          { round: id, leaf: settlement.leaf_index }));
      }
      result.rounds[key] = !problem && !late && !betFault && !betLate && !dealt && Boolean(bet);
      if (problem) {
        result.problems.push(gettext("round %(round)s: %(problem)s (%(where)s)",
          { round: id, problem, where: inCheckpoint(settlement.entry.seq, settlement.checkpoint_size) }));
      }
      if (late) result.problems.push(gettext("round %(round)s: a decision was logged after the round settled", { round: id }));
      if (!bet && !betPending) result.problems.push(gettext("round %(round)s: the bundle carries no anchor of its bet in the log", { round: id }));
      if (betFault) {
        result.problems.push(gettext("round %(round)s: %(problem)s (%(where)s)",
          { round: id, problem: betFault, where: inCheckpoint(bet.entry.seq, bet.checkpoint_size) }));
      }
      if (betLate) result.problems.push(gettext("round %(round)s: the round's bet was logged after it was played", { round: id }));
      if (dealt) {
        result.problems.push(gettext("round %(round)s: its bet was logged at leaf %(leaf)s, before the bet of round %(earlier)s (nonce %(nonce)s) at leaf %(earlier_leaf)s: a pair's nonces are taken in order, each with its bet logged, so the nonces were dealt out of order",
          { round: id, leaf: bet.leaf_index, earlier: dealt.id, nonce: dealt.nonce, earlier_leaf: dealt.leaf }));
      }
      const played = [settlement, ...decisions, ...(bet ? [bet] : [])];
      for (const leaf of played.map((a) => a.leaf_index)) {
        if (firstLeaf === null || leaf < firstLeaf) firstLeaf = leaf;
        if (lastLeaf === null || leaf > lastLeaf) lastLeaf = leaf;
      }
    }
    if (commitment && firstLeaf !== null && commitment.leaf_index >= firstLeaf) {
      result.commitment = false;
      result.problems.push(gettext("the pair's commitment was logged at leaf %(commitment)s, after its first round at leaf %(first)s: the pair was committed after it was played",
        { commitment: commitment.leaf_index, first: firstLeaf }));
    }
    if (bundle.reveal) checkReveal(bundle.reveal.document, revealed, lastLeaf, pending, result);
    // A document anchored twice fails, whatever else holds (the rounds of this bundle only, as
    // offline).
    const places = [["pair", "commitment"], ...(bundle.reveal ? [["reveal", "reveal"]] : []),
      ...bundle.rounds.map((signed) => ["round:" + roundKey(signed.document.round_id), null])];
    for (const [place, pairKind] of places) {
      if (!twice.has(place)) continue;
      result.problems.push(...twice.get(place));
      twice.delete(place); // a round listed twice in the bundle is named once
      if (pairKind) result[pairKind] = false;
      else result.rounds[place.slice("round:".length)] = false;
    }
    return result;
  }

  // ---- the witness -----------------------------------------------------------------------------

  /* Fetch `url` as JSON; with `seconds`, give up (a TimeoutError) if the answer, body included,
   * takes longer. */
  const fetchAnswer = (url, seconds) => fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
    signal: seconds && AbortSignal.timeout ? AbortSignal.timeout(seconds * 1000) : undefined,
  });

  async function fetchJson(url) {
    const response = await fetchAnswer(url);
    return { status: response.status, body: response.ok ? await window.SotaJson.answerOf(response) : null };
  }

  const signedOf = (seen) => ({ document: seen.document, signature: seen.signature });
  const sameCheckpoint = (a, b) => a.document.size === b.document.size && a.document.root === b.document.root;
  const differing = (size, both) => Nn_("FORK: two signed checkpoints over %(num)s entry differ: %(both)s",
    "FORK: two signed checkpoints over %(num)s entries differ: %(both)s", size, both);
  /* What UNPROVEN holds: `checkpoints`, the signed checkpoints shown but not proved consistent
   * with the kept one, oldest first, each with why its proof was not had and when
   * ({document, signature, why, at}); and `unkept` ({since}) once more were shown than it
   * remembers. A record an earlier version of the page kept has one `why` and `at` for all. */
  async function unprovenRecord() {
    const record = (await load(UNPROVEN)) || {};
    const listed = Array.isArray(record.checkpoints) ? record.checkpoints.filter(isCheckpoint) : [];
    const checkpoints = listed.map((one) => ({ ...signedOf(one), why: one.why || record.why, at: one.at || record.at }));
    const unkept = record.unkept && typeof record.unkept.since === "string" ? { since: record.unkept.since } : null;
    return { checkpoints, unkept };
  }

  function saveUnproven(record) {
    return record.checkpoints.length || record.unkept ? save(UNPROVEN, record) : forget(UNPROVEN);
  }

  /* Keep an alarm: `reason` is a message (i18n.js's N_), translated each time it is shown;
   * `unsigned`: `seen` is not signed by the key, so the alarm proves nothing to anyone else. */
  async function alarm(reason, kept, seen, unsigned = false) {
    const raised = { reason, kept, seen, at: new Date().toISOString(), ...(unsigned ? { unsigned } : {}) };
    await save(ALARM, raised);
    return { ok: false, alarm: raised };
  }

  /* Remember `seen` as shown but not proved consistent with the kept checkpoint, with why and
   * when (one remembered already gets the latest answer). A casino that forked its log need only
   * withhold the proof, so this is no note: it is shown as a warning on every page until a proof
   * joins it (`settle`).
   * Bounded without forgetting a fork: each one remembered may be the only trace of one, so none
   * is dropped for a newer one (a cheat could then flood it out), and one per size is enough
   * (another root at that size is a fork at once, `observe`). Past UNPROVEN_LIMIT a new one is
   * not remembered, only that there were such (`unkept`): those can never be checked, so the
   * warning then stays until this browser's storage is cleared. */
  async function unproven(kept, seen, why) {
    const record = await unprovenRecord();
    const at = new Date().toISOString();
    const known = record.checkpoints.find((other) => sameCheckpoint(other, seen));
    if (known) Object.assign(known, { why, at });
    else if (record.checkpoints.length < UNPROVEN_LIMIT) record.checkpoints.push({ ...signedOf(seen), why, at });
    else if (!record.unkept) record.unkept = { since: at };
    await saveUnproven(record);
    return { ok: null, size: kept.document.size };
  }

  /* Whether two signed checkpoints, the one kept here and one seen since, are one history, in
   * either order: an older checkpoint than the kept one is no evidence by itself (a page from a
   * cache, or another tab that kept a newer one first, shows one), so the service is asked to
   * prove the older a prefix of the newer, whichever that is. {joined: true}: the same
   * checkpoint, or the proof verifies; {fork: reason}: the service contradicts a checkpoint it
   * signed (two roots at one size, a proof that does not join them, or a 404 for the sizes it
   * signed, named by the kept one's size: the one a log rolled back below it cannot prove); or
   * {unproven: why}: no usable answer. */
  async function related(kept, seen) {
    const [mine, shown] = [kept.document, seen.document];
    const both = { both: N_("kept %(kept)s, served %(served)s", { kept: described(mine), served: described(shown) }) };
    if (mine.size === shown.size) return mine.root === shown.root ? { joined: true } : { fork: differing(mine.size, both) };
    const [older, newer] = mine.size < shown.size ? [mine, shown] : [shown, mine];
    let response;
    try {
      response = await fetchAnswer(CONSISTENCY_URL + "?" + new URLSearchParams({ old_size: older.size, new_size: newer.size }),
        PROOF_WAIT_SECONDS);
    } catch (error) {
      if (error.name === "TimeoutError") {
        return { unproven: Nn_("the service gave no answer within %(num)s second", "the service gave no answer within %(num)s seconds",
          PROOF_WAIT_SECONDS) };
      }
      return { unproven: N_("the service could not be reached") };
    }
    if (response.status === 404) {
      return { fork: Nn_("FORK: the service no longer proves the checkpoint it signed over %(num)s entry: %(both)s",
        "FORK: the service no longer proves the checkpoint it signed over %(num)s entries: %(both)s", mine.size, both) };
    }
    if (response.status === 503) return { unproven: N_("the service is unavailable for now (HTTP 503)") };
    if (!response.ok) return { unproven: N_("the service answered HTTP %(status)s", { status: response.status }) };
    const body = await window.SotaJson.answerOf(response).catch(() => null);
    const proof = body && body.proof;
    if (!Array.isArray(proof) || !proof.every(isHex64)) return { unproven: N_("the service's answer is not a consistency proof") };
    if (await verifyConsistency(older.size, newer.size, hexToBytes(older.root), hexToBytes(newer.root), proof.map(hexToBytes))) {
      return { joined: true };
    }
    return { fork: newer === shown
      ? N_("FORK: the served checkpoint does not extend the kept one: %(both)s", both)
      : N_("FORK: the service's consistency proof does not join two checkpoints it signed: %(both)s", both) };
  }

  /* Join each checkpoint remembered as unproven to the kept one, forgetting those proved; stop
   * at the first the service gives no proof for (it is not answering now). */
  async function settle(kept) {
    const record = await unprovenRecord();
    while (record.checkpoints.length) {
      const next = record.checkpoints[0];
      const found = await related(kept, next);
      if (found.fork) return alarm(found.fork, kept, next);
      if (found.unproven) return unproven(kept, next, found.unproven);
      record.checkpoints.shift();
      await saveUnproven(record);
    }
    await saveUnproven(record);
    return { ok: true, size: kept.document.size };
  }

  /* Run `work` while no other tab of this site runs its own: each reads what is kept, asks the
   * service and writes, so two at once would write over each other. Without Web Locks (an old
   * browser, or a page not served securely) it runs at once, as before. */
  function exclusively(work) {
    const locks = window.navigator.locks;
    return locks && typeof locks.request === "function" ? locks.request(LOCK, work) : work();
  }

  /* Compare a signed checkpoint seen now with the one kept here; keep the larger of the two only
   * once they are proved one history. What is kept is read again here, in the lock: another
   * tab may have changed it since this page began. So may the key: `key` is the key to check
   * with, or a function that reads it, in the lock (the page's own witness: another tab may
   * have pinned another key, and kept a checkpoint it signed, while this one waited). */
  const observe = (seen, key) => exclusively(async () => observeHere(seen, typeof key === "function" ? await key() : key))
    .catch((error) => ({ ok: null, note: cannotCheck(error) }));

  async function observeHere(seen, key) {
    if (!isCheckpoint(seen)) return { ok: null, note: gettext("the service answered something that is not a checkpoint") };
    if (!key) return noKeyPinned();
    const kept = await load(KEPT);
    const doc = seen.document;
    const pin = window.SotaRecords.pinnedKey();
    // The signature decides, not the key the answer names beside it (which nothing signs): a
    // checkpoint the key signed is witnessed whatever key is named there.
    if (!(await signedBy(key, seen))) {
      if (seen.public_key_hex && pin && seen.public_key_hex !== pin.public_key_hex) {
        // A changed key: records.js says so loudly; nothing is checked against an untrusted key.
        return { ok: null, size: kept && kept.document.size, note: gettext("The log's checkpoint is signed by a key this browser does not trust yet; it is not checked.") };
      }
      return alarm(N_("BAD SIGNATURE: the checkpoint %(checkpoint)s is not signed by the pinned key", { checkpoint: described(doc) }), kept, seen, true);
    }
    // Each checkpoint remembered as unproven is the casino's signed word as much as the kept
    // one: another root at its size, or a date that orders it against this one's size the
    // wrong way, is a cheat whatever any proof says later.
    const remembered = (await unprovenRecord()).checkpoints;
    const twin = remembered.find((one) => one.document.size === doc.size && one.document.root !== doc.root);
    if (twin) {
      const both = { both: N_("shown before %(shown)s, served %(served)s", { shown: described(twin.document), served: described(doc) }) };
      return alarm(differing(doc.size, both), twin, seen);
    }
    const datedAgainst = remembered.find((one) => backdated(one.document, doc));
    if (datedAgainst) {
      const both = { both: N_("shown before %(shown)s, served %(served)s", { shown: dated(datedAgainst.document), served: dated(doc) }) };
      return alarm(N_("BACKDATED: of two signed checkpoints, the one over more entries is dated before the one over fewer: %(both)s", both), datedAgainst, seen);
    }
    if (!isCheckpoint(kept)) return keep(seen);
    // The casino's signed times against each other, never this computer's clock, which its
    // owner may set forward, back or wrong: no clock of the browser's tells that apart from time
    // passed, and an honest casino is no cheat for it. (A round left out of the log past its
    // bound, its later checkpoints dated just after the kept one, fails on this page by the
    // time it fetches the round's bundle, checkAnchors.)
    if (backdated(kept.document, doc)) {
      const both = { both: N_("kept %(kept)s, served %(served)s", { kept: dated(kept.document), served: dated(doc) }) };
      return alarm(N_("BACKDATED: of two signed checkpoints, the one over more entries is dated before the one over fewer: %(both)s", both), kept, seen);
    }
    const found = await related(kept, seen);
    if (found.fork) return alarm(found.fork, kept, seen);
    if (found.unproven) return unproven(kept, seen, found.unproven);
    if (doc.size > kept.document.size) return keep(seen);
    return settle(kept);
  }

  /* Keep `seen`, and join to it what is remembered as unproven. */
  async function keep(seen) {
    await save(KEPT, signedOf(seen));
    for (const name of OLD_SERVED) await forget(name);
    return settle(signedOf(seen));
  }

  /* The checkpoints remembered as unproven, by reason, each reason with the sizes it is the
   * latest answer for: "size 12: the service answered HTTP 500; sizes 15, 19: …". */
  function unprovenSizes(checkpoints) {
    const reasons = new Map();
    for (const one of checkpoints) {
      const said = window.SotaI18n.say(one.why);
      reasons.set(said, (reasons.get(said) || []).concat([one.document.size]));
    }
    return Array.from(reasons, ([why, sizes]) => ngettext("size %(sizes)s: %(why)s", "sizes %(sizes)s: %(why)s",
      sizes.length, { sizes: sizes.join(", "), why })).join("; ");
  }

  /* The warning while checkpoints are remembered as unproven, or more were shown than it keeps. */
  function unprovenWarning(record, kept) {
    const since = record.unkept && window.SotaI18n.time(record.unkept.since);
    if (!record.checkpoints.length) {
      return gettext("⚠ UNPROVEN: since %(since)s this browser was shown more checkpoints it could not prove consistent with the one it keeps (size %(kept)s) than it can remember: those it could not remember it can never check, so this warning stays until this browser's storage is cleared.",
        { since, kept: kept.document.size });
    }
    const warning = gettext("⚠ UNPROVEN: this browser could not check that the casino's log is consistent with what it saw before: no consistency proof joins the checkpoint it keeps (size %(kept)s) with what it was shown since (%(shown)s). A casino that forked its log would withhold that proof, so this warning stays, and every page asks again, until the proof is had.",
      { kept: kept.document.size, shown: unprovenSizes(record.checkpoints) });
    return !since ? warning : warning + " " + gettext("Since %(since)s it was shown more unproven checkpoints than it can remember: those it could not remember it can never check, so this warning stays until this browser's storage is cleared.",
      { since });
  }

  async function show(outcome) {
    // A store that cannot be read now leaves what the outcome says.
    const readable = (promise, otherwise) => promise.catch(() => otherwise);
    const [keptAlarm, waiting, kept] = await Promise.all([
      readable(load(ALARM), null), readable(unprovenRecord(), { checkpoints: [], unkept: null }), readable(load(KEPT), null)]);
    // An alarm raised now is shown even where it could not be kept (a full disk).
    const raised = keptAlarm || (outcome && outcome.alarm) || null;
    for (const holder of document.querySelectorAll("[data-log-witness]")) {
      holder.replaceChildren();
      holder.removeAttribute("role");
      const line = document.createElement("span");
      if (raised) {
        holder.className = "log-witness bad";
        holder.setAttribute("role", "alert");
        const why = { why: window.SotaI18n.say(raised.reason || raised.why) };
        if (raised.unsigned) {
          line.textContent = keptAlarm
            ? gettext("✗ THE CASINO SERVED THIS BROWSER A CHECKPOINT ITS KEY DID NOT SIGN. %(why)s. Unsigned, it proves nothing to anyone else, but an honest casino serves none (this browser remembers it until its storage is cleared).", why)
            : gettext("✗ THE CASINO SERVED THIS BROWSER A CHECKPOINT ITS KEY DID NOT SIGN. %(why)s. Unsigned, it proves nothing to anyone else, but an honest casino serves none (this browser could not remember it: its storage refused it, so it is shown on this page only).", why);
        } else {
          line.textContent = keptAlarm
            ? gettext("✗ THE CASINO SHOWED THIS BROWSER TWO HISTORIES. %(why)s. Both checkpoints are signed with its key: keep them as proof (this browser keeps them until its storage is cleared).", why)
            : gettext("✗ THE CASINO SHOWED THIS BROWSER TWO HISTORIES. %(why)s. Both checkpoints are signed with its key: keep them as proof (this browser could not keep them: its storage refused them, so they are shown on this page only).", why);
        }
      } else if ((waiting.checkpoints.length || waiting.unkept) && isCheckpoint(kept)) {
        holder.className = "log-witness warn";
        line.textContent = unprovenWarning(waiting, kept);
      } else if (outcome && outcome.ok) {
        holder.className = "log-witness ok";
        line.textContent = ngettext("✓ This browser has checked the casino's public log up to %(num)s entry: every checkpoint it saw is signed by the pinned key and extends the one before.",
          "✓ This browser has checked the casino's public log up to %(num)s entries: every checkpoint it saw is signed by the pinned key and extends the one before.",
          outcome.size);
      } else {
        holder.className = "log-witness";
        line.textContent = (outcome && outcome.note) || gettext("This browser has not checked the public log yet.");
      }
      holder.dataset.logSize = raised ? "" : String((outcome && outcome.size) || "");
      holder.append(line);
    }
  }

  const cannotCheck = (error) => gettext("The public log could not be checked: %(reason)s", { reason: String(error.message || error) });
  const noKeyPinned = () => ({ ok: null, note: gettext("No key is pinned in this browser yet, so the public log is not checked.") });

  /* The pinned key to check checkpoints with, or null if none is pinned; a weak one (pinned by
   * an earlier version of the page) is refused, saying why: it signs nothing. */
  async function pinnedCryptoKey() {
    const pin = window.SotaRecords && window.SotaRecords.pinnedKey();
    if (!subtle || !pin) return null;
    const key = await window.SotaRecords.verifyingKey(hexToBytes(pin.public_key_hex));
    if (key === null) throw new Error(window.SotaRecords.weakKeyRefusal(pin.public_key_hex));
    return key;
  }

  /* Witness the checkpoint the page carries ([data-log-checkpoint], the latest when the page
   * was made: every table and round page has one), or, with `fetchLatest`, the latest now. */
  async function witness(fetchLatest) {
    const carried = document.querySelector("script[data-log-checkpoint]");
    if (!carried && !fetchLatest) {
      await show(null);
      return null;
    }
    let outcome;
    try {
      if (window.SotaRecords) await window.SotaRecords.keyChecked(); // a key change shown here may move the pin
      const key = await pinnedCryptoKey();
      let latest = null;
      if (fetchLatest) {
        const answer = await fetchJson(CHECKPOINT_URL);
        latest = answer.body;
      } else {
        latest = window.SotaJson.read(carried.textContent || "null");
      }
      if (!key) outcome = noKeyPinned();
      else if (!latest) outcome = { ok: null, note: gettext("The casino has not signed a checkpoint of its log yet.") };
      else outcome = await observe(latest.checkpoint, pinnedCryptoKey);
    } catch (error) {
      outcome = { ok: null, note: cannotCheck(error) };
    }
    await show(outcome);
    return outcome;
  }

  window.SotaLog = {
    checkAnchors, pendingDated, roundKey, written, proofProblem, isAuditEntry, entryShapeProblem, isCheckpoint, timeParts, signedBy, signedByAny, observe, witness, show, pinnedCryptoKey, verifyInclusion, verifyConsistency,
    kept: () => load(KEPT), alarm: () => load(ALARM), unproven: () => load(UNPROVEN), unprovenLimit: UNPROVEN_LIMIT,
  };
  // After records.js has pinned the key this page shows (its own DOMContentLoaded handler).
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => witness(false));
  else witness(false);
})();
