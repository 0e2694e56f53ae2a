/* The player's own records, kept in this browser (localStorage) for each player apart, on every
 * page a player is logged in on (docs/fairness.md, "Where the page keeps the records").
 *
 * A signed bundle only proves what the casino signed. What protects the player against a
 * casino that re-signs is what the player saw and sent, kept where the casino cannot change it:
 *   - the service's public key, pinned the first time a page shows it (trust on first use);
 *     a page showing another key moves the pin on only along a chain of key changes, each
 *     signed by the key it retires, from the pinned key to the shown one (the offline
 *     verifier's rule, `successorChain`: it stops at a key handed on twice), and says so
 *     calmly; without such a chain it says so loudly (naming the fork, if a key on the way
 *     was handed on twice), and only an explicit "Trust the new key" replaces the pin;
 *   - every signed commitment document shown before play (`<script type="application/json"
 *     data-signed-commitment>` holding {"document", "signature"}), the next pair's included:
 *     the fairness page shows it before the player chooses the client seed that starts it;
 *   - the client seed sent to start each pair (`rotations`): the rotate form carries
 *     `data-record-rotation` with the id of the pair it starts, and on submit the last seed
 *     sent for that pair from the same active pair is kept (`recordRotation`). The next page that shows the active pair checks at once that
 *     the casino started that pair, with its recorded commitment and that seed, and warns
 *     loudly, until the player hides it, when it did not (only for a rotation sent from this
 *     tab: the pending one waits in sessionStorage, so rotations made elsewhere raise nothing);
 *   - every decision and Prisoners of War move the casino accepted, never one it refused (a
 *     record of a refused one would make the page's verifier accuse the casino of a change it
 *     never made). A page script that sends a form itself (and so calls preventDefault) calls
 *     `SotaRecords.recordAction(...)` once the answer accepts it. A form with
 *     `data-record-action` (and data-round-id, data-seed-pair-id, data-nonce, data-game,
 *     optional data-move) posted as a plain form waits in sessionStorage, this tab's, and the
 *     answer's page records it unless that page shows a refusal (`data-refusal`: the flashed
 *     refusal of a form, or an error page) or still offers the same choice (the post never got
 *     there); the next page forgets it either way;
 *   - the rules and the amounts each bet was sent with (`bets`): the Casino War table's rules as
 *     its page showed them (the bet names them, and is refused if the table's differ) with the
 *     ante and tie bet, a Sota game's preset or rules as sent with its stake; the scripts that
 *     bet call `SotaRecords.recordBet(...)` once the round is dealt. The casino signs the rules
 *     and the stakes in each receipt and pays by them, so only this record shows a round settled
 *     under other rules or stakes than those the player bet. It also places its round: a round
 *     without a decision or move (no tie, no prisoners' moves) has no other record.
 *   - the sha256 of each document the page's verifier found signed by the trusted key, under the
 *     name only one document may have (`verified`, kept under a key of its own; the offline
 *     verifier's `signed_documents`): a bundle signing another document under that name later
 *     is the casino's own proof of a rewrite, though each bundle alone passes
 *     (`compareVerified`).
 * "My records" (`[data-export-records]`) downloads them in the format the offline verifier reads
 * with `--records FILE`. The page's verifier compares each bundle with them (`compareBundle`).
 */
"use strict";

(function () {
  // The player's records, digests and warnings are kept apart for each player (storeOf): on a
  // shared computer the next player to log in must neither see nor export them, nor have the
  // page's verifier read them. Under these names alone, an earlier version kept every player's
  // together; `migrateUnscoped` splits them by player.
  const STORE = "sota-casino.records.v1";
  // Apart from STORE: it grows with every round verified, and a full storage then loses only
  // these digests, never a decision or a move recorded after.
  const VERIFIED = "sota-casino.verified.v1";
  const ROTATION_WARNINGS = "sota-casino.rotation-warnings.v1";
  // The casino's key, the same for every player: pinned once for the browser, so that a player
  // new to it is held to the key an earlier one pinned, and it says nothing of any player.
  const PIN = "sota-casino.pinned-key.v1";
  const PENDING_ROTATION = "sota-casino.pending-rotation.v1"; // sessionStorage: this tab's
  const PENDING_ACTION = "sota-casino.pending-action.v1"; // sessionStorage: this tab's
  const PENDING_BET = "sota-casino.pending-bet.v1"; // sessionStorage: this tab's
  // What the unscoped store held that names no player it can be told apart by (migrateUnscoped):
  // read by no verifier, shown to no one, exported only by an explicit "download" on the page.
  const UNPLACED = "unplaced";
  const FORMAT = "sota-casino-records";
  const PUBLIC_KEY_URL = "/api/v1/fairness/public-key";

  /* The player logged in on this page (base.html's `sota-player`), or null: then nothing of a
   * player's is kept or read. */
  function playerOnPage() {
    const meta = document.querySelector('meta[name="sota-player"]');
    return meta ? idOrNull(meta.getAttribute("content")) : null;
  }

  /* The name under which `name` (STORE, VERIFIED or ROTATION_WARNINGS) is kept for `owner`: a
   * player's id, or UNPLACED. */
  function storeOf(name, owner) {
    return owner === UNPLACED ? name + "." + UNPLACED : name + ".player-" + owner;
  }

  const PLAYER = playerOnPage();
  // Null with no player logged in: load gives nothing, save keeps nothing.
  const MINE = PLAYER === null ? { records: null, verified: null, warnings: null } : {
    records: storeOf(STORE, PLAYER), verified: storeOf(VERIFIED, PLAYER), warnings: storeOf(ROTATION_WARNINGS, PLAYER),
  };

  function load(name, empty, storage) {
    if (name === null) return empty;
    try {
      const text = (storage || window.localStorage).getItem(name);
      return text ? JSON.parse(text) : empty;
    } catch (error) {
      return empty; // storage off (private mode) or damaged: nothing recorded
    }
  }

  function save(name, value, storage) {
    if (name === null) return false;
    try {
      (storage || window.localStorage).setItem(name, JSON.stringify(value));
      return true;
    } catch (error) {
      return false;
    }
  }

  function forget(name, storage) {
    try {
      (storage || window.localStorage).removeItem(name);
    } catch (error) {
      // storage off: nothing kept
    }
  }

  function session() {
    try {
      return window.sessionStorage;
    } catch (error) {
      return null;
    }
  }

  /* The records kept under `name` (the player's own by default); `rotations` and `bets` came
   * later, so records kept before have none. */
  function stored(name = MINE.records) {
    const records = load(name, null);
    if (!records || !Array.isArray(records.commitments) || !Array.isArray(records.actions)) {
      return { commitments: [], actions: [], rotations: [], bets: [] };
    }
    if (!Array.isArray(records.rotations)) records.rotations = [];
    if (!Array.isArray(records.bets)) records.bets = [];
    return records;
  }

  /* The digests of the documents this browser verified for the player (or kept under `name`):
   * [{name, sha256, seen_at}]. */
  function verifiedDocuments(name = MINE.verified) {
    const kept = load(name, []);
    return Array.isArray(kept) ? kept : [];
  }

  function rotationWarnings(name = MINE.warnings) {
    const kept = load(name, []);
    return Array.isArray(kept) ? kept : [];
  }

  // ---- two tabs at once --------------------------------------------------------------------
  /* localStorage has no transactions: two tabs that both read a list and then write it back
   * lose the entries of the one that wrote first. So each tab remembers what it kept, and when
   * another tab's write leaves the place of one of them empty, puts it back. A place taken by
   * another entry (a later decision for the same round) stays as the other tab left it, and so
   * does storage the player cleared. */
  const PLACES = { // one entry a place: a decision a round, a move a move of a Sota game
    commitments: (c) => canonical(c),
    actions: (a) => [a.round_id, a.game, a.game === "sota" ? a.move : ""].join(" "),
    rotations: (r) => String(r.seed_pair_id),
    bets: (b) => String(b.round_id),
    verified: (v) => v.name + " " + v.sha256,
  };
  const keptHere = { commitments: [], actions: [], rotations: [], bets: [], verified: [] };
  const RECORD_LISTS = ["commitments", "actions", "rotations", "bets"];

  /* `entries` (a list named as in PLACES) with `entry` in its place, instead of what was there. */
  function inPlace(list, entries, entry) {
    const place = PLACES[list](entry);
    return entries.filter((kept) => PLACES[list](kept) !== place).concat([entry]);
  }

  /* Put back into `entries` (a list named as in PLACES) what this tab kept and another tab's
   * write left out; whether anything was. */
  function putBack(list, entries) {
    const taken = new Set(entries.map(PLACES[list]));
    const lost = keptHere[list].filter((entry) => !taken.has(PLACES[list](entry)));
    entries.push(...lost);
    return lost.length > 0;
  }

  window.addEventListener("storage", (event) => {
    if (event.storageArea !== window.localStorage || event.newValue === null || PLAYER === null) return;
    if (event.key === MINE.records) {
      const records = stored();
      const lost = RECORD_LISTS.map((list) => putBack(list, records[list]));
      if (lost.some(Boolean)) save(MINE.records, records);
    } else if (event.key === MINE.verified) {
      const verified = verifiedDocuments();
      if (putBack("verified", verified)) save(MINE.verified, verified);
    }
  });

  // ---- records kept before they were kept for each player ----------------------------------

  /* `existing` (a list named as in PLACES) with each entry of `earlier` whose place it leaves
   * free: what was kept for the player since stands. */
  function merged(list, existing, earlier) {
    const taken = new Set(existing.map(PLACES[list]));
    return existing.concat(earlier.filter((entry) => {
      const place = PLACES[list](entry);
      const free = !taken.has(place);
      taken.add(place);
      return free;
    }));
  }

  /* Whose each seed pair and each round is, in records of several players: a pair is the
   * player's its commitment document names (`user_id`), a round the player's whose pair a
   * decision, move or bet of it names. An id two players claim is no one's (null). */
  function ownersOf(records) {
    const claim = (owners, id, player) => {
      const key = String(id);
      owners.set(key, owners.has(key) && owners.get(key) !== player ? null : player);
    };
    const pairs = new Map();
    for (const signed of records.commitments) {
      const doc = isObject(signed) && isObject(signed.document) ? signed.document : {};
      if (Number.isSafeInteger(doc.user_id) && doc.seed_pair_id != null) claim(pairs, doc.seed_pair_id, doc.user_id);
    }
    const rounds = new Map();
    for (const played of records.actions.concat(records.bets)) {
      const player = isObject(played) && played.seed_pair_id != null ? pairs.get(String(played.seed_pair_id)) : null;
      if (player != null && played.round_id != null) claim(rounds, played.round_id, player);
    }
    return {
      pair: (id) => (id == null ? null : pairs.get(String(id)) ?? null),
      round: (id) => (id == null ? null : rounds.get(String(id)) ?? null),
    };
  }

  /* The player a verified document's name places it with (the offline verifier's names). */
  function verifiedOwner(owners, name) {
    if (typeof name !== "string") return null;
    const pair = /^(?:the (?:commitment|reveal) document|nonce \S+) of seed pair (.+)$/.exec(name);
    if (pair) return owners.pair(pair[1]);
    const round = /^the receipt of round (.+)$/.exec(name);
    return round ? owners.round(round[1]) : null;
  }

  /* An earlier version kept every player's records in one store, under STORE, VERIFIED and
   * ROTATION_WARNINGS alone: split them, each into its player's (added to what is kept there
   * since, which stands), by the pairs and rounds each names (ownersOf). What names no player
   * goes UNPLACED, where only an explicit download on the fairness page reads it; a rotation
   * warning naming none is dropped (its rotation stays in the records, placed or not). The old
   * store is forgotten only once every part is kept, so a full storage loses nothing: the next
   * page tries again. Run on every page a player is logged in on, before anything is recorded;
   * a tab of the earlier version still open may write the old store again. */
  function migrateUnscoped() {
    if (PLAYER === null) return;
    try {
      const storage = window.localStorage;
      if ([STORE, VERIFIED, ROTATION_WARNINGS].every((name) => storage.getItem(name) === null)) return;
    } catch (error) {
      return; // storage off: nothing kept
    }
    const records = stored(STORE);
    const owners = ownersOf(records);
    const parts = new Map();
    const part = (owner) => {
      if (!parts.has(owner)) parts.set(owner, { commitments: [], actions: [], rotations: [], bets: [], verified: [], warnings: [] });
      return parts.get(owner);
    };
    for (const signed of records.commitments) {
      const doc = isObject(signed) && isObject(signed.document) ? signed.document : {};
      part(Number.isSafeInteger(doc.user_id) ? doc.user_id : UNPLACED).commitments.push(signed);
    }
    for (const list of ["actions", "bets", "rotations"]) {
      for (const entry of records[list].filter(isObject)) {
        const owner = owners.pair(entry.seed_pair_id) ?? (list === "rotations" ? null : owners.round(entry.round_id));
        part(owner ?? UNPLACED)[list].push(entry);
      }
    }
    for (const entry of verifiedDocuments(VERIFIED).filter(isObject)) {
      part(verifiedOwner(owners, entry.name) ?? UNPLACED).verified.push(entry);
    }
    for (const warning of rotationWarnings(ROTATION_WARNINGS).filter(isObject)) {
      const owner = owners.pair(warning.seed_pair_id);
      if (owner !== null) part(owner).warnings.push(warning);
    }
    let kept = true;
    for (const [owner, lists] of parts) {
      const into = stored(storeOf(STORE, owner));
      for (const list of RECORD_LISTS) into[list] = merged(list, into[list], lists[list]);
      if (RECORD_LISTS.some((list) => lists[list].length)) kept = save(storeOf(STORE, owner), into) && kept;
      if (lists.verified.length) {
        const name = storeOf(VERIFIED, owner);
        kept = save(name, merged("verified", verifiedDocuments(name), lists.verified)) && kept;
      }
      if (lists.warnings.length) {
        const name = storeOf(ROTATION_WARNINGS, owner);
        const shown = rotationWarnings(name);
        const at = new Set(shown.map((warning) => warning && warning.at));
        kept = save(name, shown.concat(lists.warnings.filter((warning) => !at.has(warning.at)))) && kept;
      }
      // Another tab's write of what it read before this one is put back, as any record is.
      if (owner === PLAYER) for (const list of [...RECORD_LISTS, "verified"]) keptHere[list].push(...lists[list]);
    }
    if (kept) [STORE, VERIFIED, ROTATION_WARNINGS].forEach((name) => forget(name));
  }

  migrateUnscoped();

  /* Sorted keys, no spaces: equal documents give equal text. */
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  /* A lone surrogate (U+D800–U+DFFF not in a pair), which UTF-8 cannot encode. */
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

  /* Whether no string of `value` (keys included, at any depth) holds a lone surrogate. */
  function wellFormed(value) {
    if (typeof value === "string") return !LONE_SURROGATE.test(value);
    if (Array.isArray(value)) return value.every(wellFormed);
    if (value !== null && typeof value === "object") return Object.keys(value).every((k) => wellFormed(k) && wellFormed(value[k]));
    return true;
  }

  /* The canonical bytes of `value`, what is signed and hashed (docs/fairness.md, "Canonical JSON
   * and signatures"). A string holding a lone surrogate has none: JSON.stringify would write it
   * as the six characters \udXXX, which Python's canonical_json refuses to encode, so a document
   * or an audit entry holding one is signed or hashed by no bytes of the scheme. Throws then. */
  function canonicalBytes(value) {
    if (!wellFormed(value)) throw new Error("a lone surrogate has no canonical bytes");
    return new TextEncoder().encode(canonical(value));
  }

  // ---- the pinned key ----------------------------------------------------------------------

  function pinnedKey() {
    const pin = load(PIN, null);
    return pin && typeof pin.public_key_hex === "string" ? pin : null;
  }

  function isKey(hex) {
    return typeof hex === "string" && /^[0-9a-f]{64}$/.test(hex);
  }

  function keyBytes(hex) {
    return Uint8Array.from(hex.match(/../g), (pair) => parseInt(pair, 16));
  }

  /* The encodings of the curve's points of small order (its cofactor is 8), sign bit cleared,
   * and the prime every canonical y coordinate is below (core/fairness.py, weak_key_problem). */
  const SMALL_ORDER_KEYS = new Set([
    "0000000000000000000000000000000000000000000000000000000000000000", // order 4
    "0100000000000000000000000000000000000000000000000000000000000000", // the identity
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2 (y = p - 1)
  ]);
  const FIELD_PRIME = 2n ** 255n - 19n;

  /* Why the raw public key `raw` (bytes) must not be trusted to sign anything, in words, or
   * null (core/fairness.py, weak_key_problem): under a key of small order anyone can sign
   * without a private key (under the identity, WebCrypto takes one signature for every
   * message), and a y coordinate of 2^255 - 19 or more writes a point a second way, which
   * libraries read differently. No honest key is either. */
  function weakKeyProblem(raw) {
    const bytes = Uint8Array.from(raw);
    if (bytes.length !== 32) return gettext("it is not 32 bytes");
    bytes[31] &= 0x7f; // the top bit is the sign of x
    const y = bytes.reduceRight((value, byte) => value * 256n + BigInt(byte), 0n);
    if (y >= FIELD_PRIME) return gettext("it is not canonically encoded (its y coordinate is 2^255 - 19 or more)");
    const masked = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
    if (SMALL_ORDER_KEYS.has(masked)) return gettext("it is of small order: anyone can sign under it without a private key");
    return null;
  }

  /* What refusing the key `hex` (64 hex digits) says, if it is weak (weakKeyProblem); or null. */
  function weakKeyRefusal(hex) {
    const weak = weakKeyProblem(keyBytes(hex));
    return weak && gettext("key %(key)s… is refused: %(why)s", { key: hex.slice(0, 16), why: weak });
  }

  /* The CryptoKey that checks signatures by the raw public key `raw`, or null for a weak key
   * (weakKeyProblem), which signs nothing: every page script imports the keys it verifies
   * with here. */
  async function verifyingKey(raw) {
    if (weakKeyProblem(raw) !== null) return null;
    return window.crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
  }

  /* Pin `hex` if no key is pinned yet; never replaces a pinned key, and never pins a weak one. */
  function pinFirstSeen(hex) {
    if (!isKey(hex) || pinnedKey() || weakKeyProblem(keyBytes(hex)) !== null) return pinnedKey();
    save(PIN, { public_key_hex: hex, pinned_at: new Date().toISOString(), replaced: [] });
    return pinnedKey();
  }

  /* The user's explicit choice to trust another key from now on (the old one is kept), or a
   * step of a chain of key changes (`keyChange`, the signed-over document, kept with it). */
  function acceptKey(hex, keyChange) {
    if (!isKey(hex)) throw new Error(gettext("not an Ed25519 public key: %(key)s", { key: String(hex).slice(0, 20) }));
    const refused = weakKeyRefusal(hex);
    if (refused) throw new Error(refused);
    const old = pinnedKey();
    const gone = old && { public_key_hex: old.public_key_hex, pinned_at: old.pinned_at };
    if (gone && keyChange) gone.key_change = keyChange;
    const replaced = old ? (old.replaced || []).concat([gone]) : [];
    save(PIN, { public_key_hex: hex, pinned_at: new Date().toISOString(), replaced });
    return pinnedKey();
  }

  // ---- key changes (docs/fairness.md, "Key changes") ---------------------------------------

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  /* Whether the key `publicHex` signed `doc` (transparency.js, loaded after this script,
   * checks the signature; this is called once the page has loaded). */
  async function signedBy(publicHex, doc, signature) {
    try {
      const key = await verifyingKey(keyBytes(publicHex));
      return await window.SotaLog.signedBy(key, { document: doc, signature });
    } catch (error) {
      return false; // no WebCrypto Ed25519 here: nothing is proven
    }
  }

  /* The key-change document of `envelope` if it is one, validly signed by the key it retires
   * (its old key), to a key that is not weak, dated as the scheme writes times, else null: it
   * proves nothing, or is refused (refusedKeyChanges says why; verify/trust.py,
   * signed_key_change). */
  async function signedKeyChange(envelope) {
    const doc = await signedByOldKey(envelope);
    return doc && keyChangeRefusal(doc) === null ? doc : null;
  }

  /* What the key changes of `keyChanges`, each validly signed by the key it retires, that are
   * refused say, each change once; none is followed: an honest casino never hands its trust to
   * a key anyone can sign with, and dates every change as it dates every document
   * (verify/trust.py, refused_key_changes). */
  async function refusedKeyChanges(keyChanges) {
    const said = new Set();
    for (const envelope of Array.isArray(keyChanges) ? keyChanges : []) {
      const doc = await signedByOldKey(envelope);
      const refusal = doc && keyChangeRefusal(doc);
      if (refusal) said.add(refusal);
    }
    return [...said];
  }

  /* Why a key change validly signed by its old key is not followed, or null. */
  function keyChangeRefusal(doc) {
    const keys = { old: doc.old_public_key_hex.slice(0, 16), new: doc.new_public_key_hex.slice(0, 16) };
    const weak = weakKeyProblem(keyBytes(doc.new_public_key_hex));
    if (weak) {
      return gettext("key %(old)s… was handed on to key %(new)s…, which is refused: %(why)s; no change to such a key is followed",
        { ...keys, why: weak });
    }
    if (window.SotaLog.timeParts(doc.changed_at) === null) {
      return gettext("key %(old)s… was handed on to key %(new)s… with a changed_at not written as YYYY-MM-DDTHH:MM:SS.ffffffZ; no change so dated is followed", keys);
    }
    return null;
  }

  /* The key-change documents of `keyChanges` validly signed by their old keys, refused or not:
   * a refused change is still its old key's word that it was handed on (verify/trust.py,
   * _signed_changes). */
  async function signedChanges(keyChanges) {
    const every = [];
    for (const envelope of Array.isArray(keyChanges) ? keyChanges : []) {
      const doc = await signedByOldKey(envelope);
      if (doc) every.push(doc);
    }
    return every;
  }

  /* The key-change document of `envelope` if it is one, validly signed by its old key. */
  async function signedByOldKey(envelope) {
    const doc = isObject(envelope) ? envelope.document : null;
    const signature = isObject(envelope) ? envelope.signature : null;
    if (!isObject(doc) || typeof signature !== "string") return null;
    const old = doc.old_public_key_hex;
    const signed = doc.type === "key_change" && doc.v === 1 && isKey(old) && isKey(doc.new_public_key_hex)
      && await signedBy(old, doc, signature);
    return signed ? doc : null;
  }

  /* For each old key of the key changes `docs` (each validly signed by its old key), the keys
   * it was handed on to, each with the first change of `docs` that names it: an old key with
   * two was handed on twice, and the one chain of keys forks there (verify/trust.py,
   * handed_on). */
  function handedOn(docs) {
    const handed = new Map();
    for (const doc of docs) {
      const handedTo = handed.get(doc.old_public_key_hex) || new Map();
      if (!handedTo.has(doc.new_public_key_hex)) handedTo.set(doc.new_public_key_hex, doc);
      handed.set(doc.old_public_key_hex, handedTo);
    }
    return handed;
  }

  /* What the key `old`, handed on to the keys of `handedTo` (handedOn), says if it was handed
   * on twice: once for each key after the first, in hex order (verify/trust.py,
   * forked_key_changes); nothing for a key handed on once. */
  function handedOnTwice(old, handedTo) {
    const [first, ...others] = [...handedTo.keys()].sort();
    return others.map((other) => gettext("key %(key)s… was handed on twice, to key %(first)s… and to key %(other)s…, each change signed by it: the casino's keys change in one chain, so one of the changes is a rewrite",
      { key: old.slice(0, 16), first: first.slice(0, 16), other: other.slice(0, 16) }));
  }

  /* The key changes of `keyChanges` from `trusted` to `target`: `chain`, the documents leading
   * there, each signed by the key it retires, or null if there is no such chain (the offline
   * verifier's rule, verify/trust.py, successor_chain); and `forks`, what the key the chain
   * stopped at says if it was handed on twice (handedOnTwice). Anything in `keyChanges` that
   * is not a key change validly signed by its old key is ignored: it proves nothing. A key
   * handed on twice (two changes signed by it to two different keys, a refused one too) has no
   * successor: a chain that reaches it stops there, whatever the order of the list, which its
   * holder chooses. The same change listed twice is no fork. */
  async function followedChain(trusted, target, keyChanges) {
    if (!Array.isArray(keyChanges)) return { chain: null, forks: [] };
    const every = await signedChanges(keyChanges);
    // A refused change counts as a hand-on all the same: its old key signed it.
    const handed = handedOn(every);
    const successors = oneSuccessors(handedOn(every.filter((doc) => keyChangeRefusal(doc) === null)));
    for (const old of successors.keys()) if (handed.get(old).size > 1) successors.delete(old);
    // Nor for a key on a loop of changes: following it takes a retired key into use again.
    for (const loop of loopsOf(successors)) for (const key of loop) successors.delete(key);
    const chain = [];
    let key = trusted;
    while (key !== target) {
      const step = successors.get(key);
      if (!step || chain.length > successors.size) {
        return { chain: null, forks: handed.has(key) ? handedOnTwice(key, handed.get(key)) : [] };
      }
      chain.push(step);
      key = step.new_public_key_hex;
    }
    return { chain, forks: [] };
  }

  /* Each key's one successor among the changes `handed` (handedOn): none for a key handed on
   * twice. */
  function oneSuccessors(handed) {
    const successors = new Map();
    for (const [old, handedTo] of handed) {
      if (handedTo.size === 1) successors.set(old, [...handedTo.values()][0]);
    }
    return successors;
  }

  /* The loops of key changes among `successors` (oneSuccessors): the keys of each, from the
   * lowest, each loop once. Each change is signed by the key it retires, so a loop is its keys'
   * holders' own word that a retired key was taken into use again, which an honest casino never
   * does (verify/trust.py, _loops). */
  function loopsOf(successors) {
    const loops = new Map();
    for (const start of successors.keys()) {
      const path = [start];
      let key = successors.get(start).new_public_key_hex;
      while (successors.has(key) && !path.includes(key)) {
        path.push(key);
        key = successors.get(key).new_public_key_hex;
      }
      if (key === start) {
        const first = path.indexOf([...path].sort()[0]);
        const loop = [...path.slice(first), ...path.slice(0, first)];
        loops.set(loop.join(" "), loop);
      }
    }
    return [...loops.values()];
  }

  /* The key-change documents leading from `trusted` to `target`, or null (followedChain). */
  async function successorChain(trusted, target, keyChanges) {
    return (await followedChain(trusted, target, keyChanges)).chain;
  }

  /* The key changes the casino publishes from the pinned key to `shown` (followedChain), with
   * what the refused ones say (`refused`, refusedKeyChanges), or no chain if the answer could not
   * be had: then nothing moves. */
  async function publishedChain(pinned, shown) {
    try {
      const response = await fetch(PUBLIC_KEY_URL, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) return { chain: null, forks: [], refused: [] };
      const keyChanges = (await window.SotaJson.answerOf(response)).key_changes;
      return { ...(await followedChain(pinned, shown, keyChanges)), refused: await refusedKeyChanges(keyChanges) };
    } catch (error) {
      return { chain: null, forks: [], refused: [] };
    }
  }

  /* Move the pin along a chain that starts at the pinned key, one key change at a time, and
   * say so calmly: each change is signed by the key it retires, the first by the pinned one. */
  function followChain(chain) {
    for (const step of chain) acceptKey(step.new_public_key_hex, step);
    const changes = chain.map((step) => gettext("%(old)s → %(new)s on %(when)s", {
      old: step.old_public_key_hex, new: step.new_public_key_hex, when: window.SotaI18n.time(step.changed_at),
    })).join("; ");
    const main = document.getElementById("main") || document.body;
    main.prepend(el("p", { class: "flash info", role: "status", "data-testid": "key-change-followed" },
      gettext("The casino changed its signing key, and the key this browser pinned signed the change: %(changes)s. This browser now trusts the new key.",
        { changes })));
    showPins();
    return pinnedKey();
  }

  // ---- recording ----------------------------------------------------------------------------

  function recordCommitment(signed) {
    if (!signed || typeof signed.document !== "object" || typeof signed.signature !== "string") return false;
    const records = stored();
    const text = canonical(signed);
    if (records.commitments.some((known) => canonical(known) === text)) return false;
    const entry = { document: signed.document, signature: signed.signature };
    records.commitments.push(entry);
    keptHere.commitments.push(entry);
    return save(MINE.records, records);
  }

  /* The amounts a bet sends, by game, named as its receipt's `stakes` name them (the offline
   * verifier's records.BET_AMOUNTS): the ante and tie bet in minor units, the stake in sweets. */
  const BET_AMOUNTS = { casino_war: ["bet", "tie_bet"], sota: ["stake"] };

  function isAmount(value) {
    return Number.isSafeInteger(value) && value >= 0;
  }

  function idOrNull(value) {
    if (value === undefined || value === null || value === "") return null;
    const number = Number(value);
    return Number.isSafeInteger(number) && number >= 0 ? number : null;
  }

  /* Record a decision ({round_id, game: "casino_war", action}) or a move ({round_id, game:
   * "sota", move, cards}) the casino accepted. A later record of the same decision or move
   * replaces the earlier one: the later one is what the caller knows counted. */
  function recordAction(action) {
    const roundId = idOrNull(action && action.round_id);
    if (roundId === null) throw new Error("a recorded action needs its round_id");
    const records = stored();
    const entry = {
      round_id: roundId,
      seed_pair_id: idOrNull(action.seed_pair_id),
      nonce: idOrNull(action.nonce),
      game: action.game,
    };
    if (action.game === "casino_war") {
      if (!["war", "surrender"].includes(action.action)) throw new Error(gettext("a Casino War decision is war or surrender"));
      entry.action = action.action;
    } else if (action.game === "sota") {
      if (!Array.isArray(action.cards) || !action.cards.every((c) => typeof c === "string")) {
        throw new Error(gettext("a Sota move is a list of cards"));
      }
      let move = idOrNull(action.move);
      if (move === null) { // not known to the caller: the next move of this round recorded here
        const made = records.actions.filter((a) => a.round_id === roundId && a.game === "sota");
        move = made.length ? Math.max(...made.map((a) => a.move)) + 1 : 0;
      }
      entry.move = move;
      entry.cards = action.cards.slice();
    } else {
      throw new Error("unknown game " + JSON.stringify(action.game));
    }
    records.actions = inPlace("actions", records.actions, entry);
    keptHere.actions = inPlace("actions", keptHere.actions, entry);
    save(MINE.records, records);
    return entry;
  }

  /* Record the client seed sent to start a seed pair ({seed_pair_id, client_seed}, and
   * sent_from: the pair active when it was sent, kept here only). One per pair, the last sent:
   * a refused rotation is followed by the one that counted, sent from the same active pair. A
   * seed sent for the same pair from another active pair replaces nothing: the casino started
   * some other pair after the first was sent and still offers this one, so the first stays as
   * the evidence. Returns the record kept. */
  function recordRotation(rotation) {
    const pair = idOrNull(rotation && rotation.seed_pair_id);
    const clientSeed = rotation && rotation.client_seed;
    if (pair === null || typeof clientSeed !== "string" || !clientSeed) {
      throw new Error("a recorded rotation needs its seed_pair_id and client_seed");
    }
    const records = stored();
    const from = idOrNull(rotation.sent_from);
    const earlier = records.rotations.find((r) => r.seed_pair_id === pair);
    if (earlier && idOrNull(earlier.sent_from) !== null && from !== null && earlier.sent_from !== from) return earlier;
    const entry = { seed_pair_id: pair, client_seed: clientSeed };
    if (from !== null) entry.sent_from = from;
    records.rotations = inPlace("rotations", records.rotations, entry);
    keptHere.rotations = inPlace("rotations", keptHere.rotations, entry);
    save(MINE.records, records);
    return entry;
  }

  /* Record the amounts and the rules a bet was sent with, once its round is dealt: {round_id,
   * seed_pair_id, nonce, game, bet, tie_bet, rules} for Casino War (every table option, as the
   * bet named them), and for Sota {…, stake} with the request's own `preset` or `rules` (the
   * options it leaves out are the defaults). A round takes one bet: a retry answered with the
   * same round replaces nothing of worth. */
  function recordBet(bet) {
    const roundId = idOrNull(bet && bet.round_id);
    if (roundId === null) throw new Error("a recorded bet needs its round_id");
    const entry = { round_id: roundId, seed_pair_id: idOrNull(bet.seed_pair_id), nonce: idOrNull(bet.nonce), game: bet.game };
    const amounts = BET_AMOUNTS[bet.game] || [];
    if (!amounts.every((name) => isAmount(bet[name]))) throw new Error("a recorded bet names the amounts it sent");
    for (const name of amounts) entry[name] = bet[name];
    if (bet.game === "sota" && typeof bet.preset === "string") entry.preset = bet.preset;
    else if (["casino_war", "sota"].includes(bet.game) && isObject(bet.rules)) entry.rules = { ...bet.rules };
    else throw new Error("a recorded bet names its game and its rules");
    const records = stored();
    records.bets = inPlace("bets", records.bets, entry);
    keptHere.bets = inPlace("bets", keptHere.bets, entry);
    save(MINE.records, records);
    return entry;
  }

  /* The records file of the player's records, or of those kept under `names` ({records,
   * verified}, as MINE names them). */
  function exportDocument(names = MINE) {
    const records = stored(names.records);
    const pin = pinnedKey();
    return {
      format: FORMAT,
      v: 1,
      public_key_hex: pin ? pin.public_key_hex : null,
      commitments: records.commitments,
      actions: records.actions,
      rotations: records.rotations.map((r) => ({ seed_pair_id: r.seed_pair_id, client_seed: r.client_seed })),
      bets: records.bets,
      verified: verifiedDocuments(names.verified),
    };
  }

  /* What the store of records kept before they were kept for each player held and names no
   * player (migrateUnscoped): never compared, exported only by its own button. */
  const UNPLACED_STORES = { records: storeOf(STORE, UNPLACED), verified: storeOf(VERIFIED, UNPLACED) };

  // ---- comparing a bundle with the records --------------------------------------------------

  function short(hex) {
    return typeof hex === "string" ? hex.slice(0, 16) + "…" : String(hex);
  }

  function cardsText(cards) {
    return Array.isArray(cards) ? cards.join(" ") : JSON.stringify(cards);
  }

  /* The client seed a bundle's pair deals with: the reveal's, or before the reveal the one its
   * receipts share (the most common; check 3 fails any other). */
  function dealtClientSeed(bundle) {
    const reveal = bundle.reveal && bundle.reveal.document;
    if (reveal) return typeof reveal.client_seed === "string" ? reveal.client_seed : null;
    const counts = new Map();
    for (const signed of bundle.rounds || []) {
      const seed = signed && signed.document && signed.document.client_seed;
      if (typeof seed === "string") counts.set(seed, (counts.get(seed) || 0) + 1);
    }
    let common = null;
    for (const [seed, n] of counts) if (common === null || n > counts.get(common)) common = seed;
    return common;
  }

  /* Whether a bundle's pair id names the recorded pair: a pair re-committed with its id
   * written as the text "12" is still pair 12, and its records apply (the log's subject,
   * seed_pair:12, reads the same). The recorded id is a number: a commitment the casino showed
   * under "12" or [12] is recorded for no pair, as the offline verifier keeps it (a JSON value
   * of another type is another key there). */
  function samePair(recorded, shown) {
    return typeof recorded === "number" && String(recorded) === String(shown);
  }

  /* What the rotations recorded say about the client seed the pair deals with. */
  function rotationProblems(records, pairId, dealt) {
    if (typeof dealt !== "string") return [];
    const mine = records.rotations.find((r) => samePair(r.seed_pair_id, pairId));
    if (mine) {
      return mine.client_seed === dealt ? [] : [gettext("seed pair #%(pair)s deals with the client seed %(dealt)s, but you sent %(sent)s to start it (recorded)",
        { pair: pairId, dealt: JSON.stringify(dealt), sent: JSON.stringify(mine.client_seed) })];
    }
    const other = records.rotations.filter((r) => r.client_seed === dealt && !samePair(r.seed_pair_id, pairId))
      .map((r) => r.seed_pair_id).sort((a, b) => b - a)[0];
    if (other === undefined) return [];
    const kept = records.commitments.some((c) => c.document && c.document.seed_pair_id === other);
    return [kept
      ? gettext("seed pair #%(pair)s deals with the client seed you sent to start seed pair #%(other)s (whose commitment you recorded before play): a pair committed after your client seed was known", { pair: pairId, other })
      : gettext("seed pair #%(pair)s deals with the client seed you sent to start seed pair #%(other)s: a pair committed after your client seed was known", { pair: pairId, other })];
  }

  /* Every rule a recorded bet was placed under (the offline verifier's records._check_bet): a
   * Casino War bet names each table option, a Sota bet its preset or its rules, the rest the
   * defaults; null for a record no table plays (damaged: nothing recorded). */
  function agreedRules(bet) {
    try {
      if (bet.game === "casino_war") return isObject(bet.rules) ? bet.rules : null;
      if (bet.game !== "sota") return null;
      return typeof bet.preset === "string" ? window.SotaEngine.presetRules(bet.preset) : window.SotaEngine.ruleSet(bet.rules);
    } catch (error) {
      return null;
    }
  }

  /* The amounts a recorded bet sent, as its receipt's `stakes` name them (the offline
   * verifier's records._sent_amounts): a Casino War bet without `tie_bet` sent a tie bet of 0;
   * null for a record kept before the amounts were, or damaged (nothing recorded). */
  function sentAmounts(bet) {
    const amounts = BET_AMOUNTS[bet.game];
    const has = (name) => Object.prototype.hasOwnProperty.call(bet, name);
    if (!amounts || !has(amounts[0])) return null;
    const sent = Object.fromEntries(amounts.map((name) => [name, has(name) ? bet[name] : 0]));
    return Object.values(sent).every(isAmount) ? sent : null;
  }

  /* Each value of `recorded` that `signed` (an object of the receipt's) does not hold: its name,
   * the value recorded and the receipt's, as JSON (null where the receipt has none). */
  function notHeld(recorded, signed) {
    const shown = isObject(signed) ? signed : {};
    const held = (name) => Object.prototype.hasOwnProperty.call(shown, name);
    return Object.keys(recorded).sort().filter((name) => !held(name) || canonical(shown[name]) !== canonical(recorded[name]))
      .map((name) => ({ name, yours: JSON.stringify(recorded[name]), signed: held(name) ? JSON.stringify(shown[name]) : null }));
  }

  /* Each rule the bet was placed under and each amount it sent that the receipt's `rules` and
   * `stakes` do not hold. */
  function betDifferences(bet, doc) {
    const agreed = agreedRules(bet);
    const sent = sentAmounts(bet);
    const absent = gettext("nothing"); // apart: a gettext inside another's arguments is not extracted
    const rules = (agreed ? notHeld(agreed, doc.rules) : []).map(({ name, yours, signed }) =>
      gettext("you bet under %(option)s %(yours)s, the receipt says %(signed)s", { option: name, yours, signed: signed ?? absent }));
    const stakes = (sent ? notHeld(sent, doc.stakes) : []).map(({ name, yours, signed }) =>
      gettext("you sent %(field)s %(yours)s, the receipt says %(signed)s", { field: name, yours, signed: signed ?? absent }));
    return rules.concat(stakes);
  }

  /* A decision or a game in the page's words; a code these records do not know, as it is. */
  function named(code) {
    const names = { war: gettext("war"), surrender: gettext("surrender"), casino_war: gettext("Casino War"), sota: gettext("Sota") };
    return Object.prototype.hasOwnProperty.call(names, code) ? names[code] : String(code);
  }

  /* What the records say about one bundle: {commitment: true/false/null (no record),
   * rounds: {round_id: {ok, recorded, bet}}, problems: [...]} — each problem names what differs.
   * `commitment` is false too when the pair deals with a client seed the records hold for
   * another pair, or not with the one sent to start it: then it was not shown before the seed. */
  function compareBundle(bundle) {
    const records = stored();
    const problems = [];
    const pairDoc = bundle.commitment && bundle.commitment.document;
    const pairId = pairDoc && pairDoc.seed_pair_id;
    const shown = records.commitments.filter((c) => c.document && samePair(c.document.seed_pair_id, pairId));
    let commitment = null;
    if (shown.length) {
      const differing = shown.filter((c) => canonical(c.document) !== canonical(pairDoc));
      commitment = differing.length === 0;
      for (const c of differing) {
        const what = c.document.commitment !== pairDoc.commitment
          ? gettext("commitment %(shown)s, the bundle's is %(bundled)s", { shown: short(c.document.commitment), bundled: short(pairDoc.commitment) })
          : gettext("a different commitment document (%(document)s)", { document: canonical(c.document) });
        problems.push(gettext("seed pair #%(pair)s was re-committed: before play you were shown %(what)s", { pair: pairId, what }));
      }
    }
    const seeds = rotationProblems(records, pairId, dealtClientSeed(bundle));
    if (seeds.length) commitment = false;
    problems.push(...seeds);
    const rounds = {};
    const inBundle = new Set();
    let recordedStakes = 0;
    for (const signed of bundle.rounds || []) {
      const doc = signed.document;
      inBundle.add(doc.round_id);
      const mine = records.actions.filter((a) => a.round_id === doc.round_id);
      const bet = records.bets.filter((b) => b.round_id === doc.round_id).pop(); // the last kept
      if (!mine.length && !bet) continue;
      const differences = [];
      for (const a of bet ? mine.concat([bet]) : mine) {
        // Not known (null, or left out of records kept by hand): nothing to compare.
        if (a.seed_pair_id != null && a.seed_pair_id !== doc.seed_pair_id) {
          differences.push(gettext("you played it on seed pair #%(yours)s, the receipt says #%(signed)s", { yours: a.seed_pair_id, signed: doc.seed_pair_id }));
        }
        if (a.nonce != null && a.nonce !== doc.nonce) {
          differences.push(gettext("you played it at nonce %(yours)s, the receipt says %(signed)s", { yours: a.nonce, signed: doc.nonce }));
        }
        if (a.game !== doc.game) {
          differences.push(gettext("you played %(yours)s, the receipt says %(signed)s", { yours: named(a.game), signed: named(doc.game) }));
        } else if (a === bet) {
          differences.push(...betDifferences(bet, doc));
        } else if (a.game === "casino_war") {
          const signedChoice = (doc.actions || [])[0];
          if (signedChoice !== a.action) {
            // Worded apart: the extractor skips a gettext in another's arguments (i18n.js).
            const signed = signedChoice === undefined ? gettext("no decision") : named(signedChoice);
            differences.push(gettext("you chose %(yours)s, the receipt says %(signed)s", { yours: named(a.action), signed }));
          }
        } else {
          const signedMove = (doc.actions || [])[a.move];
          if (canonical(signedMove) !== canonical(a.cards)) {
            const signed = signedMove === undefined ? gettext("no such move") : cardsText(signedMove);
            differences.push(gettext("your move %(move)s laid %(yours)s, the receipt says %(signed)s",
              { move: a.move + 1, yours: cardsText(a.cards), signed }));
          }
        }
      }
      rounds[doc.round_id] = { ok: differences.length === 0, recorded: mine.length, bet: Boolean(bet) };
      if (bet && sentAmounts(bet)) recordedStakes += 1;
      for (const d of differences) problems.push(gettext("round %(round)s: %(problem)s", { round: doc.round_id, problem: d }));
    }
    for (const a of records.actions.concat(records.bets)) { // every record places its round
      if (a.seed_pair_id === pairId && !inBundle.has(a.round_id)) {
        problems.push(gettext("round %(round)s, which you played on seed pair #%(pair)s, is missing from the bundle", { round: a.round_id, pair: pairId }));
        inBundle.add(a.round_id);
      }
    }
    const compared = Object.values(rounds);
    return {
      commitment, rounds, problems, unplaced: unplacedRounds(records, inBundle),
      recordedActions: compared.filter((r) => r.recorded).length, recordedBets: compared.filter((r) => r.bet).length,
      recordedStakes,
    };
  }

  /* The rounds bet or acted in that no record (a bet, a decision or a move) places by its seed
   * pair and the bundle does not hold (the offline verifier's unplaced_rounds): a record with no
   * pair is placed by its round id, and one the bundle lacks may be of another pair, so it
   * fails nothing, but it was compared with nothing and must be said. */
  function unplacedRounds(records, inBundle) {
    const played = records.actions.concat(records.bets);
    const placed = new Set(played.filter((a) => a.seed_pair_id != null).map((a) => a.round_id));
    const unplaced = played.map((a) => a.round_id).filter((id) => !placed.has(id) && !inBundle.has(id));
    return [...new Set(unplaced)].sort((a, b) => a - b);
  }

  // ---- the documents this browser verified ---------------------------------------------------

  /* The offline verifier's digest of a document: sha256(canonical_json(document)), in hex. */
  async function documentDigest(doc) {
    const digest = await window.crypto.subtle.digest("SHA-256", canonicalBytes(doc));
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // The names of a pair's commitment document and of the pair committed to a server seed, as
  // the offline verifier's signed_documents writes them, before the pair's id and the commitment.
  const COMMITMENT_OF = "the commitment document of seed pair ";
  const COMMITTED_TO = "the seed pair committed to ";

  /* Compare the documents of a bundle found signed by the trusted key (`signed`: each
   * {names, document}, every name {name, label}: `name` as the offline verifier's
   * signed_documents names it, kept; `label` the same in the page's language, shown) with those
   * this browser verified before, then keep them, also when they differ: a name that two signed
   * documents claim is the casino's own proof that it rewrote one of them, and two pairs
   * committed to one server seed (the name marked `seed`) its proof that it reused the seed
   * (each named by its commitment document's name, kept with it). Returns the problems,
   * and whether the list could be kept (a full storage keeps none of the new digests).
   *
   * The digests are taken first: the kept list is read, merged and written back with no await
   * between, so that two verifications at once on one page both keep theirs (two tabs at
   * once: each puts back what the other's write dropped, `putBack`). */
  async function compareVerified(signed) {
    const digests = await Promise.all(signed.map(({ document: doc }) => documentDigest(doc)));
    const verified = verifiedDocuments();
    const byName = new Map(); // name -> the entries kept under it
    for (const kept of verified) byName.set(kept.name, (byName.get(kept.name) || []).concat([kept]));
    const problems = [];
    const now = new Date().toISOString();
    // The pair of a commitment document kept, by its digest (the id as its name writes it).
    const pairOf = (sha256) => {
      const kept = verified.find((k) => k.sha256 === sha256 && k.name.startsWith(COMMITMENT_OF));
      return kept ? kept.name.slice(COMMITMENT_OF.length) : null;
    };
    signed.forEach(({ names }, i) => {
      const sha256 = digests[i];
      const named = new Set(); // a receipt that differs under its round and its nonce: said once
      for (const { name, label, seed } of names) {
        const under = byName.get(name) || [];
        for (const kept of under) {
          if (kept.sha256 === sha256 || named.has(kept.sha256)) continue;
          named.add(kept.sha256);
          if (seed) {
            // Two pairs committed to one server seed (one pair's two commitment documents are
            // an equivocation, said under the pair's own name).
            const [pair, other] = [pairOf(sha256), pairOf(kept.sha256)];
            if (pair === other) continue;
            problems.push(gettext("seed reused: seed pair %(pair)s is committed to the server seed of seed pair %(other)s, which this browser verified on %(when)s (commitment %(commitment)s), both signed: a server seed serves one pair, and revealed for either it tells every shuffle of the other in advance",
              { pair, other: other === null ? "?" : other, when: window.SotaI18n.time(kept.seen_at), commitment: short(name.slice(COMMITTED_TO.length)) }));
            continue;
          }
          problems.push(gettext("equivocation: %(name)s differs from the one this browser verified on %(when)s, both signed (sha256 %(digest)s and %(other)s): one of them is a rewrite",
            { name: label, when: window.SotaI18n.time(kept.seen_at), digest: short(sha256), other: short(kept.sha256) }));
        }
        if (!under.some((kept) => kept.sha256 === sha256)) {
          const entry = { name, sha256, seen_at: now };
          verified.push(entry);
          keptHere.verified.push(entry);
          byName.set(name, under.concat([entry]));
        }
      }
    });
    return { problems, kept: save(MINE.verified, verified) };
  }

  // ---- the page -------------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  function showPins() {
    const pin = pinnedKey();
    for (const slot of document.querySelectorAll("[data-pinned-key]")) {
      if (pin) slot.textContent = pin.public_key_hex;
    }
    for (const slot of document.querySelectorAll("[data-pinned-at]")) {
      slot.textContent = pin ? gettext("pinned since %(when)s", { when: window.SotaI18n.time(pin.pinned_at) })
        : gettext("not pinned (this browser keeps no storage for this site)");
    }
  }

  /* Pin the key a page shows; when it is not the pinned one, follow the key changes signed
   * from the pinned key to it, or warn loudly when they do not lead there. */
  async function checkShownKeys() {
    for (const node of document.querySelectorAll("[data-service-public-key]")) {
      const shown = node.getAttribute("data-service-public-key");
      const pin = pinFirstSeen(shown);
      if (!pin || pin.public_key_hex === shown) continue;
      const { chain, forks, refused } = await publishedChain(pin.public_key_hex, shown);
      if (chain) {
        followChain(chain);
        return;
      }
      const accept = el("button", { type: "button", "data-accept-key": shown }, gettext("Trust the new key"));
      const warning = el("div", { class: "flash bad key-changed", role: "alert", "data-testid": "key-changed" },
        el("strong", {}, gettext("⚠ The casino's signing key has changed.") + " "),
        gettext("This browser pinned the key %(pinned)s on %(when)s, but this page shows %(shown)s. Nothing is verified against the new key unless you trust it. Trust it only if the casino announced the change somewhere you trust; otherwise its signatures prove nothing.",
          { pinned: pin.public_key_hex, when: window.SotaI18n.time(pin.pinned_at), shown }) + " ",
        // The holder of a key on the way signed two changes from it: its own proof of a rewrite.
        ...forks.map((fork) => el("p", { "data-testid": "key-handed-on-twice" },
          el("strong", {}, gettext("FORK: %(fork)s. This browser follows neither change.", { fork })))),
        ...refused.map((said) => el("p", { "data-testid": "key-change-refused" }, el("strong", {}, said))),
        // A weak key is never trusted, not even by choice.
        ...(isKey(shown) && weakKeyProblem(keyBytes(shown)) !== null ? [] : [accept]));
      accept.addEventListener("click", () => {
        acceptKey(shown);
        warning.replaceWith(el("p", { class: "flash info", role: "status" }, gettext("This browser now trusts the key %(key)s.", { key: shown })));
        showPins();
      });
      const main = document.getElementById("main") || document.body;
      main.prepend(warning);
      return; // one warning per page
    }
  }

  function recordShownCommitments() {
    for (const node of document.querySelectorAll('script[type="application/json"][data-signed-commitment]')) {
      try {
        recordCommitment(window.SotaJson.read(node.textContent));
      } catch (error) {
        // a damaged element records nothing
      }
    }
  }

  /* The decision or move a form with `data-record-action` sends, as recordAction takes it. */
  function formAction(form, submitter) {
    const data = form.dataset;
    const base = { round_id: data.roundId, seed_pair_id: data.seedPairId, nonce: data.nonce, game: data.game };
    if (data.game === "casino_war") {
      const choice = submitter && submitter.value ? submitter.value : (new FormData(form)).get("choice");
      return { ...base, action: choice };
    }
    const fields = new FormData(form);
    const up = fields.get("up");
    const cards = fields.getAll("down").filter((card) => card !== up).concat(up ? [up] : []);
    return { ...base, move: data.move, cards };
  }

  /* What this tab keeps pending under `name` for the player of this page. Kept for another (who
   * logged out in this tab since), it is forgotten: it is no record of this player's, and a
   * rotation warning would show this player the other's client seed. */
  function pendingHere(name) {
    const tab = session();
    const pending = tab ? load(name, null, tab) : null;
    if (!pending || pending.player === PLAYER) return pending;
    forget(name, tab);
    return null;
  }

  /* A decision or move posted as a plain form: the answer is the next page this tab loads
   * (settlePendingAction). */
  function keepPendingAction(form, submitter) {
    const tab = session();
    if (tab) save(PENDING_ACTION, { ...formAction(form, submitter), player: PLAYER }, tab);
  }

  /* A bet a page script sends as its plain form after all (the API refused it or could not be
   * reached): the answer is the next page this tab loads (settlePendingBet). `bet` is as
   * recordBet takes it, without the round it deals. */
  function keepPendingBet(bet) {
    const tab = session();
    if (tab) save(PENDING_BET, { ...bet, player: PLAYER }, tab);
  }

  /* On the page that answers a plain post of a bet, record it with the round the page shows if
   * the post was answered by a redirect to a round's page (`data-dealt-round`: a refusal draws
   * the form again, and a round's page opened by a link was not reached by a redirect); forget
   * it either way. */
  function settlePendingBet() {
    const pending = pendingHere(PENDING_BET);
    if (!pending) return;
    forget(PENDING_BET, session());
    const dealt = document.querySelector("[data-dealt-round]");
    const [arrival] = performance.getEntriesByType("navigation");
    if (!dealt || !arrival || arrival.type !== "navigate" || arrival.redirectCount < 1) return;
    try {
      recordBet({ ...pending, ...JSON.parse(dealt.dataset.dealtRound) });
    } catch (error) {
      // a bet the page could not read back: nothing to record
    }
  }

  /* Whether this page still offers the choice `action` answers: then the casino did not make it. */
  function stillOffered(action) {
    return Array.from(document.querySelectorAll("form[data-record-action]")).some((form) => {
      const data = form.dataset;
      return idOrNull(data.roundId) === idOrNull(action.round_id) && data.game === action.game
        && (action.game !== "sota" || idOrNull(data.move) === idOrNull(action.move));
    });
  }

  /* On the page that answers a plain post of a decision or move, record it unless the page
   * shows a refusal (`data-refusal`: the refusal flashed when a refused form goes back, or an
   * error page) or still offers the same choice; forget it either way, so that no later page
   * records it. */
  function settlePendingAction() {
    const pending = pendingHere(PENDING_ACTION);
    if (!pending) return;
    forget(PENDING_ACTION, session());
    if (document.querySelector("[data-refusal]") || stillOffered(pending)) return;
    try {
      recordAction(pending);
    } catch (error) {
      // an incomplete form, which the server refuses: nothing to record
    }
  }

  /* The signed commitment this page shows for `pair` (the next pair's, on the fairness page). */
  function shownCommitment(pair) {
    for (const node of document.querySelectorAll('script[type="application/json"][data-signed-commitment]')) {
      try {
        const signed = window.SotaJson.read(node.textContent);
        if (signed && signed.document && signed.document.seed_pair_id === pair) return signed;
      } catch (error) {
        // a damaged element shows nothing
      }
    }
    return null;
  }

  /* The rotate form: keep the client seed sent to start the pair it names, and what to check
   * when the next page shows the active pair (this tab only). */
  function recordFormRotation(form) {
    const pair = idOrNull(form.dataset.recordRotation);
    const from = idOrNull(form.dataset.seedPairId);
    const clientSeed = (new FormData(form)).get("client_seed");
    recordRotation({ seed_pair_id: pair, client_seed: clientSeed, sent_from: from });
    const tab = session();
    if (tab) {
      save(PENDING_ROTATION, {
        seed_pair_id: pair,
        client_seed: clientSeed,
        from,
        player: PLAYER,
        commitment: shownCommitment(pair)
          || stored().commitments.find((c) => c.document && c.document.seed_pair_id === pair) || null,
      }, tab);
    }
  }

  /* What differs between the pair now active and the rotation this tab sent, as messages kept
   * for later (N_): a warning is shown again, in the language of the page that shows it. */
  function rotationDifferences(pending, active) {
    if (active.seed_pair_id !== pending.seed_pair_id) {
      return [N_("the casino activated seed pair #%(active)s, not seed pair #%(sent)s, whose signed commitment this browser recorded before you sent your client seed",
        { active: active.seed_pair_id, sent: pending.seed_pair_id })];
    }
    const differences = [];
    const recorded = pending.commitment && pending.commitment.document;
    if (recorded && canonical(recorded) !== canonical(active.commitment_document)) {
      differences.push(N_("seed pair #%(pair)s now has commitment %(shown)s, not %(recorded)s, which this browser recorded before you sent your client seed",
        { pair: active.seed_pair_id, shown: short(active.commitment_document && active.commitment_document.commitment), recorded: short(recorded.commitment) }));
    }
    if (active.client_seed !== pending.client_seed) {
      differences.push(N_("seed pair #%(pair)s deals with the client seed %(dealt)s, not %(sent)s, which you sent",
        { pair: active.seed_pair_id, dealt: JSON.stringify(active.client_seed), sent: JSON.stringify(pending.client_seed) }));
    }
    return differences;
  }

  /* Right after a rotation sent from this tab: the pair now active must be the one recorded
   * before the client seed was sent (its id and commitment), with that client seed. */
  function checkRotation() {
    const tab = session();
    const pending = pendingHere(PENDING_ROTATION);
    const node = document.querySelector('script[type="application/json"][data-active-seed-pair]');
    if (!pending || !node) return;
    let active;
    try {
      active = JSON.parse(node.textContent);
    } catch (error) {
      return; // a damaged element: checked on the next page that shows the pair
    }
    if (!active || active.seed_pair_id === pending.from) return; // not rotated (refused): wait
    forget(PENDING_ROTATION, tab);
    const differences = rotationDifferences(pending, active);
    if (!differences.length) {
      for (const slot of document.querySelectorAll("[data-rotation-check]")) {
        slot.textContent = "✓ " + gettext("Seed pair #%(pair)s is active with the client seed you sent and the signed commitment this browser recorded before you sent it.", { pair: active.seed_pair_id });
      }
      return;
    }
    save(MINE.warnings, rotationWarnings().concat([{
      at: new Date().toISOString(), client_seed: pending.client_seed, seed_pair_id: pending.seed_pair_id, differences,
    }]));
  }

  /* Every rotation that went wrong, on every page, until the player hides it. */
  function showRotationWarnings() {
    const warnings = rotationWarnings();
    const main = document.getElementById("main") || document.body;
    for (const warning of warnings) {
      if (!warning || !Array.isArray(warning.differences)) continue;
      const hide = el("button", { type: "button", "data-hide-rotation-warning": "" }, gettext("Hide this warning"));
      const alert = el("div", { class: "flash rotation-mismatch", role: "alert", "data-testid": "rotation-mismatch" },
        el("strong", {}, gettext("⚠ The casino did not start the seed pair you chose your client seed for.") + " "),
        gettext("You sent the client seed %(seed)s to start seed pair #%(pair)s, but %(differences)s. A pair the casino committed after it knew your client seed can be dealt to make you lose.", {
          seed: JSON.stringify(warning.client_seed), pair: warning.seed_pair_id,
          differences: warning.differences.map(window.SotaI18n.say).join("; ") }) + " ",
        gettext("Noticed on %(when)s. Keep your records (My records on the fairness page) and the bundle of the pair: the verifiers name it as a pair committed after your client seed was known.",
          { when: window.SotaI18n.time(warning.at) }) + " ",
        hide);
      hide.addEventListener("click", () => {
        save(MINE.warnings, rotationWarnings().filter((w) => !(w && w.at === warning.at)));
        alert.remove();
      });
      main.prepend(alert);
    }
  }

  function download(doc, filename) {
    const blob = new Blob([JSON.stringify(doc, null, 1) + "\n"], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  }

  function offerExport() {
    for (const button of document.querySelectorAll("[data-export-records]")) {
      button.addEventListener("click", () => download(exportDocument(), "sota-casino-records.json"));
      button.disabled = false;  // served disabled, like the verify buttons
    }
    // Shown only while the browser holds records that name no player (migrateUnscoped).
    const unplaced = exportDocument(UNPLACED_STORES);
    const held = RECORD_LISTS.concat(["verified"]).some((list) => unplaced[list].length);
    for (const offer of document.querySelectorAll("[data-unplaced-records]")) {
      offer.hidden = !held || PLAYER === null;
      const button = offer.querySelector("button");
      button.addEventListener("click", () => download(exportDocument(UNPLACED_STORES), "sota-casino-unplaced-records.json"));
      button.disabled = offer.hidden;
    }
    for (const node of document.querySelectorAll("[data-records-summary]")) {
      const records = stored();
      node.textContent = ngettext("%(num)s commitment", "%(num)s commitments", records.commitments.length) + " · "
        + ngettext("%(num)s bet", "%(num)s bets", records.bets.length) + " · "
        + ngettext("%(num)s decision or move recorded in this browser.", "%(num)s decisions or moves recorded in this browser.", records.actions.length);
    }
  }

  // In the bubble phase, after the form's own listeners: a page script that sends the form
  // itself has called preventDefault by then, and records the decision or move once accepted.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    try {
      if (form.hasAttribute("data-record-rotation")) recordFormRotation(form);
      if (form.hasAttribute("data-record-action") && !event.defaultPrevented) keepPendingAction(form, event.submitter);
    } catch (error) {
      // an incomplete form is refused by the server; there is nothing to record
    }
  });

  // A page shown again from the history answers no post: an attempt sent since (its answer
  // never shown) is not known to have counted.
  window.addEventListener("pageshow", (event) => {
    const tab = event.persisted ? session() : null;
    if (tab) {
      forget(PENDING_ACTION, tab);
      forget(PENDING_BET, tab);
    }
  });

  // Settled once the key this page shows is pinned, followed or warned about.
  let keyChecked = Promise.resolve();

  document.addEventListener("DOMContentLoaded", () => {
    keyChecked = checkShownKeys(); // a key seen first is pinned before it awaits
    showPins();
    recordShownCommitments();
    settlePendingAction();
    settlePendingBet();
    checkRotation();
    showRotationWarnings();
    offerExport();
  });

  window.SotaRecords = {
    pinnedKey, pinFirstSeen, acceptKey, weakKeyProblem, weakKeyRefusal, verifyingKey, signedKeyChange, refusedKeyChanges, signedChanges, handedOn, handedOnTwice, oneSuccessors, loopsOf, successorChain, followChain, keyChecked: () => keyChecked, recordCommitment, recordAction, recordRotation, recordBet, keepPendingBet, exportDocument, compareBundle,
    compareVerified, canonical, canonicalBytes,
    // Where this page keeps the player's records and those of no player: the localStorage names.
    stores: { mine: MINE, unplaced: UNPLACED_STORES },
  };
})();
