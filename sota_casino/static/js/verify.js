/* In-browser verification of a revealed seed pair's bundle, with WebCrypto only.
 *
 * Re-implements docs/fairness.md: canonical JSON, Ed25519 signatures, the SHA-256 commitment, the
 * HMAC-SHA256 stream, rejection-sampled uniform integers, the forward Fisher–Yates prefix, and
 * the Casino War rules (core/casino_war.py)'s Casino War payout, then compares every round with the server's signed receipt.
 * Sota games are replayed whole by the page's own engine (sota_engine.js): deck, every trick,
 * winner, how the game ended and payout. Signatures are checked against the key pinned in this
 * browser (records.js), or a key it handed on to by key changes each signed by the key it
 * retires (as the offline verifier does), never merely the key the bundle names, and the bundle
 * is compared with the player's own records: the commitment shown before play, the decisions
 * and moves sent, and the documents this browser verified before (a pair's commitment or reveal,
 * a round or a nonce has one signed document: another is a rewrite); and with the casino's
 * signed public log (transparency.js): each document's audit entry, proved into a checkpoint the
 * pinned key (or a key its chain of key changes leads to) signed, must say what the document says. A round is called verified only when all of that holds.
 */
"use strict";

(function () {
  const subtle = window.crypto && window.crypto.subtle;
  const encoder = new TextEncoder();

  // ---- bytes and canonical JSON ------------------------------------------------------------

  function hexToBytes(hex) {
    if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/i.test(hex)) {
      throw new Error(gettext("not hex: %(text)s", { text: String(hex).slice(0, 20) }));
    }
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }

  function bytesToHex(bytes) {
    return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /* Python's json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False):
   * JSON.stringify escapes strings the same way, so only key order and spacing need care. */
  function canonicalJson(value) {
    if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
    if (value !== null && typeof value === "object") {
      const keys = Object.keys(value).sort();
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(value[k])).join(",") + "}";
    }
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      throw new Error("a signed document holds a number that is not a safe integer");
    }
    return JSON.stringify(value);
  }

  async function sha256Hex(bytes) {
    return bytesToHex(await subtle.digest("SHA-256", bytes));
  }

  /* The CryptoKey of `publicHex`, or null for a weak key, which signs nothing (records.js,
   * verifyingKey). */
  async function ed25519Key(publicHex) {
    return window.SotaRecords.verifyingKey(hexToBytes(publicHex));
  }

  async function signatureValid(key, signed) {
    if (key === null) return false;
    try {
      canonicalJson(signed.document); // a number that is not a safe integer throws here
      const data = window.SotaRecords.canonicalBytes(signed.document);
      return await subtle.verify({ name: "Ed25519" }, key, hexToBytes(signed.signature), data);
    } catch (error) {
      return false;
    }
  }

  // ---- the stream, uniform integers, the shuffle -------------------------------------------

  class Stream {
    constructor(hmacKey, clientSeed, nonce) {
      this.key = hmacKey;
      this.prefix = clientSeed + ":" + nonce + ":";
      this.buffer = new Uint8Array(0);
      this.offset = 0;
      this.nextBlock = 0;
    }

    async block(k) {
      return new Uint8Array(await subtle.sign("HMAC", this.key, encoder.encode(this.prefix + k)));
    }

    async read(n) {
      while (this.buffer.length - this.offset < n) {
        const block = await this.block(this.nextBlock++);
        const rest = this.buffer.slice(this.offset);
        const joined = new Uint8Array(rest.length + block.length);
        joined.set(rest);
        joined.set(block, rest.length);
        this.buffer = joined;
        this.offset = 0;
      }
      const out = this.buffer.slice(this.offset, this.offset + n);
      this.offset += n;
      return out;
    }

    /* A uniform integer in [0, n): 4 big-endian bytes, rejected at or above 2^32 - 2^32 mod n. */
    async uniform(n) {
      const word = 4294967296;
      const limit = word - (word % n);
      for (;;) {
        const b = await this.read(4);
        const x = ((b[0] * 256 + b[1]) * 256 + b[2]) * 256 + b[3];
        if (x < limit) return x % n;
      }
    }
  }

  async function hmacKey(serverSeedHex) {
    return subtle.importKey(
      "raw", hexToBytes(serverSeedHex), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]
    );
  }

  const RANKS = "23456789TJQKA";
  const DECK_RANKS = {
    standard52: RANKS, jokers54: RANKS, pjanitsa36: RANKS.slice(4), piquet32: RANKS.slice(5),
  };

  function canonicalShoe(kind, decks) {
    const ranks = DECK_RANKS[kind];
    if (!ranks) throw new Error("unknown deck kind " + kind);
    const deck = [];
    for (const suit of "CDHS") for (const rank of ranks) deck.push(rank + suit);
    if (kind === "jokers54") deck.push("X1", "X2");
    const shoe = [];
    for (let d = 0; d < decks; d++) shoe.push(...deck);
    return shoe;
  }

  /* The first k cards of the forward Fisher–Yates shuffle: positions 0..k-1 are final after k steps. */
  async function shuffledPrefix(cards, stream, k) {
    const n = cards.length;
    const out = cards.slice();
    for (let i = 0; i < Math.min(k, n - 1); i++) {
      const j = i + (await stream.uniform(n - i));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out.slice(0, Math.min(k, n));
  }

  // ---- Casino War (the Casino War rules (core/casino_war.py)) ---------------------------------------------------------------

  function rankValue(card) {
    return card[0] === "X" ? 15 : RANKS.indexOf(card[0]) + 2;
  }

  /* Whether a Casino War receipt's rules are a table's (every option, of its type and range,
   * as sota_casino/core/casino_war.py holds them) and its stakes a bet that table takes: the
   * offline verifier replays nothing else. */
  const CHIP = 100;
  const WAR_RANGES = { decks: [1, 8], tie_payout: [0, 30], burn: [0, 5], min_bet: [CHIP, 1e12], max_bet: [CHIP, 1e12] };
  function warRulesAndStakesHold(rules, stakes) {
    if (!rules || typeof rules !== "object" || Array.isArray(rules)) return false;
    if (!same(Object.keys(rules).sort(), [...Object.keys(WAR_RANGES), "bonus"].sort())) return false;
    const inRange = Object.entries(WAR_RANGES).every(([name, [low, high]]) =>
      Number.isInteger(rules[name]) && low <= rules[name] && rules[name] <= high);
    if (!inRange || !["none", "ante"].includes(rules.bonus)) return false;
    if (rules.min_bet % CHIP || rules.max_bet % CHIP || rules.min_bet > rules.max_bet) return false;
    const within = (amount) => amount % CHIP === 0 && rules.min_bet <= amount && amount <= rules.max_bet;
    return within(stakes.bet) && (stakes.tie_bet === 0 || (rules.tie_payout > 0 && within(stakes.tie_bet)));
  }

  async function replayCasinoWar(doc, stream) {
    const rules = doc.rules;
    const bet = doc.stakes.bet;
    const tieBet = doc.stakes.tie_bet || 0;
    const shoe = canonicalShoe("standard52", rules.decks);
    const first = await shuffledPrefix(shoe, stream, 2);
    const player = rankValue(first[0]);
    const dealer = rankValue(first[1]);
    // The actions are the player's decisions as the round took them (check 6, as offline): none
    // when the first cards differ, exactly one on a tie.
    const actions = Array.isArray(doc.actions) ? doc.actions : null;
    if (player !== dealer && (actions === null || actions.length)) {
      throw new Error(gettext("a decision was recorded on a round that did not tie: %(actions)s", { actions: JSON.stringify(doc.actions) }));
    }
    if (player === dealer && (actions === null || actions.length !== 1)) {
      throw new Error(gettext("a tied round needs a decision, found %(actions)s", { actions: JSON.stringify(doc.actions) }));
    }
    if (player !== dealer) {
      const won = player > dealer;
      return {
        cards: first, result: won ? "win" : "lose", tieBetWon: false, raise: 0,
        payout: won ? 2 * bet : 0,
      };
    }
    // A tie: the tie bet pays; the positions of later cards never depend on the decision.
    const tieBetWon = tieBet > 0;
    const tiePayout = tieBetWon ? tieBet * (rules.tie_payout + 1) : 0;
    const choice = doc.actions[0];
    if (choice === "surrender") {
      return {
        cards: first, result: "surrender", tieBetWon, raise: 0,
        payout: Math.floor(bet / 2) + tiePayout,
      };
    }
    if (choice !== "war") throw new Error(gettext("a tied round needs a decision, found %(actions)s", { actions: JSON.stringify(doc.actions) }));
    // The same stream continues the same shuffle: recompute the longer prefix from the start.
    const cards = await shuffledPrefix(shoe, stream.restart(), rules.burn + 4);
    const warPlayer = rankValue(cards[cards.length - 2]);
    const warDealer = rankValue(cards[cards.length - 1]);
    let result, payout;
    if (warPlayer > warDealer) [result, payout] = ["war_win", 3 * bet];
    else if (warPlayer === warDealer) [result, payout] = ["war_tie", (rules.bonus === "ante" ? 4 : 3) * bet];
    else [result, payout] = ["war_lose", 0];
    return { cards, result, tieBetWon, raise: bet, payout: payout + tiePayout };
  }

  // ---- checking a bundle ------------------------------------------------------------------------

  function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  /* Where a replayed Sota outcome first differs from the receipt's, in words. */
  function outcomeDifference(signed, replayed) {
    if (!signed || typeof signed !== "object") return gettext("the receipt has no outcome");
    for (const name of ["winner", "ended_by"]) {
      if (!same(signed[name], replayed[name])) {
        return gettext("%(field)s: the receipt says %(signed)s, the replay %(replayed)s",
          { field: name, signed: JSON.stringify(signed[name]), replayed: JSON.stringify(replayed[name]) });
      }
    }
    const extra = Object.keys(signed).filter((name) => !(name in replayed));
    if (extra.length) return gettext("the receipt's outcome has an unexpected field %(field)s", { field: extra[0] });
    const tricks = Array.isArray(signed.tricks) ? signed.tricks : [];
    for (let i = 0; i < Math.max(tricks.length, replayed.tricks.length); i++) {
      if (canonicalJson(tricks[i] === undefined ? null : tricks[i]) !== canonicalJson(replayed.tricks[i] === undefined ? null : replayed.tricks[i])) {
        return ngettext("trick %(trick)s differs from the replay (the receipt has %(num)s trick, the replay %(replayed)s)",
          "trick %(trick)s differs from the replay (the receipt has %(num)s tricks, the replay %(replayed)s)",
          tricks.length, { trick: i + 1, replayed: replayed.tricks.length });
      }
    }
    return null;
  }

  // ---- the decisions the player signed (docs/fairness.md, "Decisions the player signs") ----

  const ENTRY_FIELDS = ["seq", "time", "actor", "action", "subject", "data"];

  /* Why the anchor of a logged item (a key registration, a key change) does not prove its
   * entry into a checkpoint signed by one of `keys` (CryptoKeys): "pending" when it carries no
   * anchor yet, "unusable", "unsigned", "other checkpoint", or the inclusion proof's problem as
   * {proof}; null when it holds. */
  async function entryAnchorProblem(item, keys) {
    if (!("anchor" in item)) return "pending";
    const anchor = item.anchor;
    const checkpoint = item.checkpoint;
    const log = window.SotaLog;
    if (!anchor || typeof anchor !== "object" || !log.isCheckpoint(checkpoint)) return "unusable";
    if (!(await log.signedByAny(keys, checkpoint))) return "unsigned";
    if (anchor.checkpoint_size !== checkpoint.document.size) return "other checkpoint";
    const proof = await log.proofProblem({ ...anchor, entry: item.entry }, checkpoint.document);
    return proof ? { proof } : null;
  }

  /* Why a key registration's anchor does not prove its entry into a checkpoint signed by the
   * trusted key or a key its chain of key changes leads to (`keys`, CryptoKeys), "pending" when it carries no anchor
   * yet, or null. */
  async function registrationAnchorProblem(item, keys, where, seq) {
    const problem = await entryAnchorProblem(item, keys);
    if (problem === null || problem === "pending") return problem;
    if (problem === "unusable") {
      return gettext("key registration #%(n)s (entry %(seq)s) has no usable checkpoint", { n: where, seq });
    }
    if (problem === "unsigned") {
      return gettext("key registration #%(n)s (entry %(seq)s) proves into a checkpoint that the trusted key did not sign", { n: where, seq });
    }
    if (problem === "other checkpoint") {
      return gettext("key registration #%(n)s (entry %(seq)s) names another checkpoint than the one it carries", { n: where, seq });
    }
    return gettext("key registration #%(n)s (entry %(seq)s) is not shown to be in the log: %(problem)s", { n: where, seq, problem: problem.proof });
  }

  /* Whether an audit entry hashes to the hash it shows (sha256(prev_hash ‖ canonical entry)). */
  async function entryHashHolds(entry) {
    const fields = {};
    for (const name of ENTRY_FIELDS) fields[name] = entry[name];
    const prev = hexToBytes(entry.prev_hash);
    let body;
    try {
      canonicalJson(fields); // a number that is not a safe integer throws here
      body = window.SotaRecords.canonicalBytes(fields);
    } catch (error) {
      return false; // no bytes of the scheme: it hashes to nothing it can show
    }
    const joined = new Uint8Array(prev.length + body.length);
    joined.set(prev);
    joined.set(body, prev.length);
    return await sha256Hex(joined) === entry.hash;
  }

  /* The player's keys from the bundle's key registrations: audit entries that must hash to the
   * hash they show, of this player, and, once a checkpoint covers them, proved into one signed
   * by the trusted key or a key its chain of key changes leads to (`logKeys`; docs/fairness.md, check 7). A
   * registration whose proof fails registers nothing; one without an anchor yet counts, and is
   * listed in `waiting` (not proven yet) within the bound of its entry's time, as a pending
   * document is (`log`, checkAnchors's result: its signed checkpoints and when this browser
   * fetched the bundle; and the checkpoints the anchored ones carry), else it fails. Times
   * are compared as text: they are all fixed-width UTC. */
  async function registeredKeys(bundle, userId, problems, logKeys, waiting, log) {
    const accepted = [];
    const pending = [];
    const carried = []; // the checkpoints the anchored ones hold, signed
    const list = Array.isArray(bundle.player_keys) ? bundle.player_keys : [];
    for (const [i, item] of list.entries()) {
      const entry = item && item.entry;
      const where = i + 1;
      try {
        const shape = window.SotaLog.entryShapeProblem(entry); // the log's own check: seq not true
        if (shape) {
          problems.push(gettext("key registration #%(n)s is not an audit entry: it %(shape)s", { n: where, shape }));
          continue;
        }
        if (!(await entryHashHolds(entry))) {
          problems.push(gettext("key registration #%(n)s (entry %(seq)s) does not hash to the hash it shows: it was altered",
            { n: where, seq: entry.seq }));
          continue;
        }
        const data = entry.data;
        if (entry.action !== "player_key.registered" || data.user_id !== userId || !Number.isInteger(data.key_id)) {
          problems.push(gettext("key registration #%(n)s (entry %(seq)s) is not a key registration of this player",
            { n: where, seq: entry.seq }));
          continue;
        }
        const unproven = await registrationAnchorProblem(item, logKeys, where, entry.seq);
        if (unproven === "pending") {
          pending.push({ n: where, seq: entry.seq, time: entry.time });
        } else if (unproven) {
          problems.push(unproven);
          continue;
        } else {
          carried.push(item.checkpoint);
        }
        accepted.push({ keyId: data.key_id, at: entry.time, seq: entry.seq, key: await ed25519Key(data.public_key_hex) });
      } catch (error) {
        problems.push(gettext("key registration #%(n)s is not an audit entry", { n: where }));
      }
    }
    // A later registration's checkpoint may cover an earlier one's entry: each counts.
    const judged = { problems, checkpoints: [...log.checkpoints, ...carried], fetchedAt: log.fetchedAt };
    for (const dated of pending) {
      if (window.SotaLog.pendingDated("registration", dated, judged) === "pending") {
        waiting.push(gettext("key registration #%(n)s (entry %(seq)s)", dated));
      }
    }
    accepted.sort((a, b) => a.seq - b.seq);
    // A verdict names a signing key by its id, which the player compares with its own: a second
    // key under one id would pass for the player's. The first registration stands, as offline.
    const byId = new Map();
    for (const key of accepted) {
      if (!byId.has(key.keyId)) {
        byId.set(key.keyId, key);
        continue;
      }
      problems.push(gettext("key %(key)s is registered twice, at log entry %(first)s and at log entry %(second)s: a key id names one key, so a key registered again under the id of another would pass for it",
        { key: key.keyId, first: byId.get(key.keyId).seq, second: key.seq }));
    }
    return [...byId.values()];
  }

  /* What is wrong with a receipt's signed actions: each must be the player's signature of the
   * action document for the receipt's round and choice, by a key registered before the round
   * settled; the action it settled on must be signed once a key was registered, by the key in
   * use then. A key was registered before the round settled if its entry is dated before the
   * receipt, or logged before the round's settlement entry (settledSeq, null if the bundle
   * names none): the log orders registrations and decisions as the service took them, while
   * the times are the casino's to write. Any other action the log took (actedSeqs, the seqs
   * of the round's decision and move entries in the log's order) after a registration must be
   * signed too, by the key in use when the log took it: the service takes no unsigned action
   * then, nor one signed by a key the player had replaced. */
  async function signedActionProblems(doc, keys, settledSeq, actedSeqs = []) {
    const before = (k) => k.at < doc.settled_at || (settledSeq !== null && k.seq < settledSeq);
    const actions = Array.isArray(doc.actions) ? doc.actions : [];
    if (!actions.length) return [];
    const signed = doc.signed_actions === undefined ? actions.map(() => null) : doc.signed_actions;
    if (!Array.isArray(signed) || signed.length !== actions.length) return [gettext("signed_actions does not match the actions")];
    const problems = [];
    for (const [index, entry] of signed.entries()) {
      if (entry === null) {
        const registered = index < signed.length - 1 && Number.isInteger(actedSeqs[index])
          ? keys.filter((k) => k.seq < actedSeqs[index]).pop() : null;
        if (index && signed[index - 1] !== null) problems.push(gettext("action %(index)s is unsigned after a signed one", { index }));
        else if (registered) {
          problems.push(gettext("action %(index)s is unsigned, but the player's key %(key)s was registered before the log took it: the player did not make it",
            { index, key: registered.keyId }));
        }
        continue;
      }
      const expected = { type: "action", v: 1, game: doc.game, round_id: doc.round_id, seed_pair_id: doc.seed_pair_id,
        nonce: doc.nonce, index, choice: actions[index] };
      if (!entry || canonicalJson(entry.document) !== canonicalJson(expected)) {
        problems.push(gettext("action %(index)s: the player signed choice %(signed)s, but the receipt's choice is %(choice)s", {
          index,
          signed: JSON.stringify(entry && entry.document ? entry.document.choice : null),
          choice: JSON.stringify(actions[index]),
        }));
      }
      const key = keys.find((k) => k.keyId === entry.key_id);
      if (!key) {
        problems.push(gettext("action %(index)s is signed by key %(key)s, which no registration of this player in the log names",
          { index, key: JSON.stringify(entry.key_id) }));
      } else if (!(await signatureValid(key.key, entry))) {
        problems.push(gettext("action %(index)s: the signature is not valid for the player's key %(key)s", { index, key: key.keyId }));
      } else if (!before(key)) {
        problems.push(gettext("action %(index)s is signed by key %(key)s, registered after the round settled", { index, key: key.keyId }));
      } else if (index < signed.length - 1 && Number.isInteger(actedSeqs[index])) {
        // The service takes an action signed by the key in use only (the settling one is held
        // to the key in use when the round settled, below).
        const inUseThen = keys.filter((k) => k.seq < actedSeqs[index]).pop();
        if (inUseThen && inUseThen.keyId !== key.keyId) {
          problems.push(gettext("action %(index)s is signed by key %(key)s, which the player had replaced by key %(current)s before the log took it: the player did not make it",
            { index, key: key.keyId, current: inUseThen.keyId }));
        }
      }
    }
    const inUse = keys.filter(before).pop() || null;
    const last = signed[signed.length - 1];
    if (inUse && last === null) {
      problems.push(doc.game === "casino_war"
        ? gettext("the decision is unsigned, but the player's key %(key)s was registered before the round settled: the player did not make it", { key: inUse.keyId })
        : gettext("the last move is unsigned, but the player's key %(key)s was registered before the round settled: the player did not make it", { key: inUse.keyId }));
    } else if (inUse && last && keys.some((k) => k.keyId === last.key_id) && last.key_id !== inUse.keyId) {
      problems.push(gettext("the settling action is signed by key %(key)s, which the player had replaced by key %(current)s",
        { key: last.key_id, current: inUse.keyId }));
    }
    return problems;
  }

  /* The text of a value of a signed document, as the offline verifier writes it; "null" for
   * one left out. */
  function jsonText(value) {
    try {
      return canonicalJson(value === undefined ? null : value);
    } catch (error) {
      return String(value);
    }
  }

  /* What is wrong with a receipt's bet (docs/fairness.md, "Bets the player signs"): a signed
   * bet must be the player's signature of the bet document of the receipt's own player
   * (`userId`, the commitment's), game, seed pair, nonce, stakes and rules, by a key
   * registered before the round settled (the key in use when the log took the bet, where
   * betSeq, the seq of its bet entry, is known); an unsigned bet fails once a key was
   * registered before the log took it, or, without betSeq, for a round settled with its bet
   * (no decision or move), before the round settled. */
  async function signedBetProblems(doc, keys, userId, settledSeq, betSeq) {
    const notTheirs = gettext("the bet was not signed by the player's key");
    const before = (k) => k.at < doc.settled_at || (settledSeq !== null && k.seq < settledSeq);
    const signed = doc.signed_bet === undefined ? null : doc.signed_bet;
    const plain = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
    if (signed === null) {
      const acted = Array.isArray(doc.actions) && doc.actions.length > 0;
      const inUse = betSeq !== null ? keys.filter((k) => k.seq < betSeq).pop()
        : !acted ? keys.filter(before).pop() : null;
      if (!inUse) return [];
      return [betSeq !== null
        ? gettext("the bet is unsigned, but the player's key %(key)s was registered before the log took the bet: %(why)s", { key: inUse.keyId, why: notTheirs })
        : gettext("the bet is unsigned, but the player's key %(key)s was registered before the round was bet and settled: %(why)s", { key: inUse.keyId, why: notTheirs })];
    }
    if (!plain(signed) || !plain(signed.document)) {
      return [gettext("the signed bet is not {document, signature, key_id}: %(why)s", { why: notTheirs })];
    }
    const problems = [];
    const names = doc.game === "casino_war" ? ["bet", "tie_bet"] : ["stake"];
    const stakes = plain(doc.stakes)
      ? Object.fromEntries(names.filter((name) => name in doc.stakes).map((name) => [name, doc.stakes[name]]))
      : doc.stakes;
    const expected = { type: "bet", v: 1, user_id: userId, game: doc.game, seed_pair_id: doc.seed_pair_id,
      nonce: doc.nonce, stakes, rules: doc.rules };
    const fields = [...new Set([...Object.keys(expected), ...Object.keys(signed.document)])].sort();
    for (const name of fields) {
      const mine = jsonText(signed.document[name]);
      const theirs = jsonText(expected[name]);
      if (mine === theirs) continue;
      problems.push(name === "user_id"
        ? gettext("the player signed a bet of user_id %(signed)s, but the pair's player is %(receipt)s: %(why)s", { signed: mine, receipt: theirs, why: notTheirs })
        : gettext("the player signed a bet of %(name)s %(signed)s, but the receipt's %(name)s is %(receipt)s: %(why)s", { name, signed: mine, receipt: theirs, why: notTheirs }));
    }
    const key = keys.find((k) => k.keyId === signed.key_id);
    if (!key) {
      problems.push(gettext("the bet is signed by key %(key)s, which no registration of this player in the log names: %(why)s",
        { key: jsonText(signed.key_id), why: notTheirs }));
    } else if (!(await signatureValid(key.key, signed))) {
      problems.push(gettext("the bet's signature is not valid for the player's key %(key)s: %(why)s", { key: key.keyId, why: notTheirs }));
    } else if (!before(key)) {
      problems.push(gettext("the bet is signed by key %(key)s, registered after the round settled", { key: key.keyId }));
    } else if (betSeq !== null) {
      const inUse = keys.filter((k) => k.seq < betSeq).pop();
      if (inUse && inUse.keyId !== key.keyId) {
        problems.push(gettext("the bet is signed by key %(key)s, which the player had replaced by key %(current)s before the log took the bet",
          { key: key.keyId, current: inUse.keyId }));
      }
    }
    return problems;
  }

  function defaultTrustedKey() {
    const pin = window.SotaRecords && window.SotaRecords.pinnedKey();
    return pin ? pin.public_key_hex : null;
  }

  /* The keys this browser pinned before the pinned one. */
  function defaultEarlierKeys() {
    const pin = window.SotaRecords && window.SotaRecords.pinnedKey();
    return pin && Array.isArray(pin.replaced) ? pin.replaced.map((old) => old.public_key_hex) : [];
  }

  /* Which key checks the bundle's documents, as the offline verifier chooses it (verify/runner.py):
   * the trusted key, or the bundle's key when its key changes lead there from the trusted key,
   * each signed by the key it retires (`chain`). The log's checkpoints may be signed by the
   * keys that chain retired too, and by those a key trusted before (`earlier`) handed on to the
   * trusted one: a checkpoint signed before a key change is signed by the key it retired. A
   * document is signed by the key in use when it was made: one of those (`docKeys`), or a key
   * the trusted one succeeded by a key change the log proves (loggedPredecessors). */
  async function keysToCheck(bundle, trusted, earlier) {
    const successorChain = window.SotaRecords.successorChain;
    const chain = await successorChain(trusted, bundle.public_key_hex, bundle.key_changes);
    let found = { key: trusted, chain: null, logKeys: [trusted] };
    if (chain) {
      let before = [];
      for (const old of earlier) {
        const handedOn = await successorChain(old, trusted, bundle.key_changes);
        if (handedOn && handedOn.length > before.length) before = handedOn;
      }
      const retired = before.concat(chain).map((step) => step.old_public_key_hex);
      found = { key: bundle.public_key_hex, chain, logKeys: [bundle.public_key_hex, ...retired.reverse()] };
    }
    const predecessors = await loggedPredecessors(trusted, bundle.key_changes, found.logKeys);
    return { ...found, docKeys: [...found.logKeys, ...predecessors.filter((old) => !found.logKeys.includes(old))] };
  }

  /* The keys `trusted` succeeded, newest first, as the casino's signed log proves them: each
   * handed on to the key after it by a key change it signed, whose key.changed audit entry
   * (holding that signed change) is proved into a checkpoint signed by one of `logKeys`. A key
   * change alone is its old key's word, which anyone can write for a key of their own
   * (verify/trust.py, logged_predecessors). */
  async function loggedPredecessors(trusted, keyChanges, logKeys) {
    if (!Array.isArray(keyChanges)) return [];
    const checkpointKeys = await Promise.all(logKeys.map(ed25519Key));
    const predecessors = new Map(); // new key -> the key it replaced
    for (const item of keyChanges) {
      const doc = await window.SotaRecords.signedKeyChange(item);
      if (doc && !predecessors.has(doc.new_public_key_hex) && await keyChangeLogged(item, checkpointKeys)) {
        predecessors.set(doc.new_public_key_hex, doc.old_public_key_hex);
      }
    }
    const found = [];
    for (let key = predecessors.get(trusted); key && key !== trusted && !found.includes(key); key = predecessors.get(key)) {
      found.push(key);
    }
    return found;
  }

  /* Where the bundle's key changes leave the casino's one chain of keys, as the offline
   * verifier says it (verify/trust.py, forked_key_changes): a key handed on twice (two changes
   * from it to two keys, each signed by it), or a key taken into use twice (two changes into it
   * from two keys, each logged as loggedPredecessors counts them, `logKeys` CryptoKeys). Either
   * would make the chain, or the predecessor the log proves, hang on the order of the list; and
   * a loop of changes back to a retired key, each signed by the key it retires (logged or not),
   * takes a key into use twice. */
  async function forkedKeyChanges(keyChanges, logKeys) {
    if (!Array.isArray(keyChanges)) return [];
    const signed = [];
    for (const item of keyChanges) {
      const doc = await window.SotaRecords.signedKeyChange(item);
      if (doc) signed.push({ doc, item });
    }
    const handed = window.SotaRecords.handedOn(signed.map(({ doc }) => doc));
    const problems = [];
    // A refused change hands its old key on all the same: its old key signed it.
    const handedAll = window.SotaRecords.handedOn(await window.SotaRecords.signedChanges(keyChanges));
    for (const old of [...handedAll.keys()].sort()) {
      problems.push(...window.SotaRecords.handedOnTwice(old, handedAll.get(old)));
    }
    const logged = [];
    for (const { doc, item } of signed) {
      if (await keyChangeLogged(item, logKeys)) logged.push({ seq: item.entry.seq, old: doc.old_public_key_hex, key: doc.new_public_key_hex });
    }
    logged.sort((a, b) => a.seq - b.seq);
    const loggedSteps = new Set(logged.map((change) => change.old + " " + change.key));
    for (const loop of window.SotaRecords.loopsOf(window.SotaRecords.oneSuccessors(handed))) {
      const keys = [...loop, loop[0]];
      // A loop wholly logged is named below, by its entries.
      if (keys.slice(1).every((key, i) => loggedSteps.has(keys[i] + " " + key))) continue;
      problems.push(gettext("the key changes from key %(key)s… lead back to it (%(keys)s), each signed by the key it retires: a key is taken into use once, so one of the changes is a rewrite",
        { key: loop[0].slice(0, 16), keys: keys.map((key) => key.slice(0, 16) + "…").join(" → ") }));
    }
    const taken = new Map(); // new key -> its first change in the log
    const retired = new Map(); // old key -> the seq of its first change: it was in use
    for (const change of logged) {
      const first = taken.get(change.key) || change;
      taken.set(change.key, first);
      if (first.old !== change.old) {
        problems.push(gettext("entry %(seq)s: key %(key)s… is taken into use again, from key %(old)s…, after key %(first)s… was changed into it (entry %(before)s): a key is taken into use once, so one of the changes is a rewrite",
          { seq: change.seq, key: change.key.slice(0, 16), old: change.old.slice(0, 16), first: first.old.slice(0, 16), before: first.seq }));
      }
      if (!retired.has(change.old)) retired.set(change.old, change.seq);
      if (retired.has(change.key)) { // a loop of changes back to a retired key
        problems.push(gettext("entry %(seq)s: key %(key)s… is taken into use again, from key %(old)s…, after it was in use (entry %(before)s): a key is taken into use once, so one of the changes is a rewrite",
          { seq: change.seq, key: change.key.slice(0, 16), old: change.old.slice(0, 16), before: retired.get(change.key) }));
      }
    }
    return problems;
  }

  /* Whether a key change's entry is a whole key.changed audit entry holding exactly the signed
   * change, proved into a checkpoint signed by one of `keys` (CryptoKeys). */
  async function keyChangeLogged(item, keys) {
    const entry = item.entry;
    try {
      const signed = { document: item.document, signature: item.signature };
      return entry.action === "key.changed" && canonicalJson(entry.data.key_change) === canonicalJson(signed)
        && await entryHashHolds(entry) && await entryAnchorProblem(item, keys) === null;
    } catch (error) {
      return false; // not an audit entry: it proves nothing
    }
  }

  /* Whether `signed` is signed by one of `keys` (CryptoKeys). */
  async function signedByAny(keys, signed) {
    for (const key of keys) if (await signatureValid(key, signed)) return true;
    return false;
  }

  /* A value as the offline verifier's names write it (Python's str), so that the records'
   * names are its names. */
  function pythonText(value) {
    if (value === null || value === undefined) return "None";
    if (typeof value === "boolean") return value ? "True" : "False";
    return String(value);
  }

  /* The names only one signed document may have (verify/runner.py, signed_documents): a pair's
   * commitment or reveal, a round's receipt and the nonce of the pair it was dealt at, and the
   * pair committed to a server seed (its commitment: one seed serves one pair). Each is
   * {name, label}: the name is the verifier's, kept in the records; the label says it in the
   * page's language (the seed's, `seed: true`, has its own message, compareVerified). */
  function uniqueNames(kind, doc) {
    const values = { round: pythonText(doc.round_id), nonce: pythonText(doc.nonce), pair: pythonText(doc.seed_pair_id) };
    if (kind === "round") {
      return [
        { name: "the receipt of round " + values.round, label: gettext("the receipt of round %(round)s", values) },
        { name: "nonce " + values.nonce + " of seed pair " + values.pair, label: gettext("nonce %(nonce)s of seed pair %(pair)s", values) },
      ];
    }
    const label = kind === "commitment"
      ? gettext("the commitment document of seed pair %(pair)s", values)
      : gettext("the reveal document of seed pair %(pair)s", values);
    const named = [{ name: "the " + kind + " document of seed pair " + values.pair, label }];
    if (kind === "commitment") {
      named.push({ name: "the seed pair committed to " + pythonText(doc.commitment), label: "", seed: true });
    }
    return named;
  }

  /* The nonces below `rounds` that no receipt has, as the offline verifier names them (checks.py,
   * _missing): the first ten, then how many more; "" if none. Counted, not listed: a reveal
   * signed by a cheating casino may claim 2**53 rounds, and a list of them would crash the tab. */
  function missingNonces(rounds, seen) {
    if (typeof rounds !== "number" || !(rounds > 0)) return "";
    const below = Math.ceil(rounds);
    const count = below - [...seen].filter((n) => Number.isInteger(n) && n >= 0 && n < below).length;
    const first = [];
    for (let n = 0; n < below && first.length < 10; n++) if (!seen.has(n)) first.push(n);
    return count <= 0 ? "" : firstAndMore(first, count);
  }

  /* `first` (some of `count` numbers), and how many more. */
  function firstAndMore(first, count) {
    return count > first.length
      ? ngettext("%(first)s and %(num)s more", "%(first)s and %(num)s more", count - first.length, { first: first.join(", ") })
      : first.join(", ");
  }

  /* What the page says of the rounds the records hold (bets, decisions or moves) with no seed
   * pair and this bundle lacks (records.js, unplacedRounds): nothing compared them, though they
   * fail nothing. */
  function unplacedNotice(rounds) {
    return ngettext("Your records name no seed pair for round %(rounds)s, and this bundle does not hold it: it was compared with nothing here. If you played it on this seed pair, the bundle left it out; if not, verify the bundle of the pair you played it on.",
      "Your records name no seed pair for rounds %(rounds)s, and this bundle does not hold them: they were compared with nothing here. If you played them on this seed pair, the bundle left them out; if not, verify the bundles of the pairs you played them on.",
      rounds.length, { rounds: firstAndMore(rounds.slice(0, 10), rounds.length) });
  }

  /* The answer as a short text, for saying what it is instead of a bundle. */
  function shortJson(value) {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    return text.length > 40 ? text.slice(0, 40) + "…" : text;
  }

  function defaultRecords(bundle) {
    return window.SotaRecords ? window.SotaRecords.compareBundle(bundle) : null;
  }

  /* Check a bundle against the trusted key (by default the one pinned in this browser) and the
   * player's records (by default this browser's). What this browser remembers (the documents
   * it verified, the log's checkpoints it witnessed) is compared and kept only under its own
   * trust: a bundle checked against a key given here may hold anything that key signed, and
   * would else raise an alarm against the casino for documents it never signed. The option
   * `fetchedAt`, when this browser fetched the bundle by its own clock, dates the bound of the
   * documents still pending (as the offline verifier's --fetched-at); without it, a bundle only
   * its checkpoints date. */
  async function verifyBundle(bundle, options) {
    // As the offline verifier refuses a file holding an empty list (exit 2): nothing in it
    // could fail, so it would pass.
    if (bundle === null || typeof bundle !== "object" || Array.isArray(bundle)) {
      throw new Error(gettext("the answer is not a bundle: %(answer)s", { answer: shortJson(bundle) }));
    }
    const opts = options || {};
    const ownTrust = opts.trustedKey === undefined;
    const trusted = ownTrust ? defaultTrustedKey() : opts.trustedKey;
    const earlier = ownTrust ? defaultEarlierKeys() : [];
    const records = opts.records === undefined ? defaultRecords(bundle) : opts.records;
    // The documents this browser verified before are part of its records.
    const verifiedBefore = ownTrust && opts.records === undefined && window.SotaRecords;
    const problems = [];
    const notices = []; // about this browser and its records, not the bundle: they fail nothing
    const commitment = bundle.commitment;
    const reveal = bundle.reveal;
    // Without a trusted key, the bundle's own, which proves nothing (said below).
    const checked = trusted === null ? { key: bundle.public_key_hex, chain: null, logKeys: [bundle.public_key_hex], docKeys: [bundle.public_key_hex] }
      : await keysToCheck(bundle, trusted, earlier);
    const pair = {
      trustedKey: trusted,
      keyMatches: trusted !== null && bundle.public_key_hex === checked.key,
      keyChain: checked.chain && checked.chain.length ? checked.chain : null,
      commitmentSigned: false,
      revealSigned: false,
      seedMatches: false,
      commitmentRecorded: records ? records.commitment : null,
    };
    if (trusted === null) {
      problems.push(gettext("no key is pinned in this browser, and nothing is verified without a key you chose to trust (open this page with storage allowed, or use the offline verifier with --public-key)"));
    } else if (!pair.keyMatches) {
      problems.push(gettext("the bundle names the key %(named)s…, not the key this browser trusts (%(trusted)s…): its signatures were checked against the trusted key",
        { named: String(bundle.public_key_hex).slice(0, 16), trusted: trusted.slice(0, 16) }));
    }
    const key = await ed25519Key(checked.key);
    const logKeys = await Promise.all(checked.logKeys.map(ed25519Key));
    const docKeys = await Promise.all(checked.docKeys.map(ed25519Key));
    if (key === null) problems.push(window.SotaRecords.weakKeyRefusal(checked.key));
    problems.push(...await window.SotaRecords.refusedKeyChanges(bundle.key_changes));
    problems.push(...await forkedKeyChanges(bundle.key_changes, logKeys));
    // Signed, and a document of the type its place holds, v 1 (check 1, "signature"): a signed
    // document of another type passed off as this one proves nothing here.
    const ofType = (signed, type) => Boolean(signed && signed.document
      && signed.document.type === type && signed.document.v === 1);
    pair.commitmentSigned = ofType(commitment, "commitment") && await signedByAny(docKeys, commitment);
    pair.revealSigned = reveal ? ofType(reveal, "reveal") && await signedByAny(docKeys, reveal) : false;
    const receipts = Array.isArray(bundle.rounds) ? bundle.rounds : [];
    // A receipt's round_id is a number, as the offline verifier's signature check holds it: an
    // object would take "101" for 101 in the log's and the records' look-ups.
    const receiptsSigned = await Promise.all(receipts.map(async (signed) => ofType(signed, "round")
      && Number.isInteger(signed.document.round_id) && signedByAny(docKeys, signed)));
    if (!pair.commitmentSigned) problems.push(gettext("the commitment's signature is not valid"));
    // The records find a pair by its integer id: one re-committed under the id "12" is not
    // another pair, and fails here with or without records (as the offline verifier's pair check).
    for (const name of ["seed_pair_id", "user_id"]) {
      const value = commitment.document[name];
      if (!Number.isInteger(value)) {
        problems.push(gettext("the commitment document's %(name)s %(value)s is not an integer",
          { name, value: JSON.stringify(value) }));
      }
    }
    if (records) problems.push(...records.problems);
    const unplaced = (records && records.unplaced) || [];
    if (unplaced.length) notices.push(unplacedNotice(unplaced));
    if (verifiedBefore && trusted !== null) {
      // Only what the trusted key signed: anything else proves nothing, and is not kept.
      const signed = [
        ...(pair.commitmentSigned ? [{ names: uniqueNames("commitment", commitment.document), document: commitment.document }] : []),
        ...(pair.revealSigned ? [{ names: uniqueNames("reveal", reveal.document), document: reveal.document }] : []),
        ...receipts.filter((_, i) => receiptsSigned[i]).map((r) => ({ names: uniqueNames("round", r.document), document: r.document })),
      ];
      const compared = await window.SotaRecords.compareVerified(signed);
      problems.push(...compared.problems);
      if (!compared.kept) {
        notices.push(gettext("This browser could not keep what it verified in this bundle (its storage is full or turned off): a later rewrite of these documents will not be caught here. Download your records now and then, and verify later bundles with the offline verifier and --records."));
      }
    }
    if (!reveal) {
      problems.push(gettext("this seed pair is not revealed yet: rotate it first"));
      return { pair, rounds: [], problems, records, waiting: [], notices };
    }
    if (!pair.revealSigned) problems.push(gettext("the reveal's signature is not valid"));
    // The reveal is the committed pair's, of the same player (check 3, "pair"), and times of
    // the scheme's one form compare as text in time order.
    if (reveal.document.seed_pair_id !== commitment.document.seed_pair_id
        || reveal.document.user_id !== commitment.document.user_id) {
      problems.push(gettext("the reveal is of seed pair %(pair)s of player %(user)s, not of the committed seed pair %(committed)s of player %(owner)s", {
        pair: JSON.stringify(reveal.document.seed_pair_id), user: JSON.stringify(reveal.document.user_id),
        committed: JSON.stringify(commitment.document.seed_pair_id), owner: JSON.stringify(commitment.document.user_id),
      }));
    }
    // A time of the form that names a real instant: a minute 60 or a 30 February dates nothing,
    // as in the offline verifier, though as text it may lie between two real ones.
    const timed = (value) => window.SotaLog.timeParts(value) !== null;
    if (!timed(commitment.document.created_at) || !timed(reveal.document.revealed_at)
        || !(commitment.document.created_at < reveal.document.revealed_at)) {
      problems.push(gettext("the reveal is dated %(revealed)s, not after the commitment was signed (%(created)s)",
        { revealed: String(reveal.document.revealed_at), created: String(commitment.document.created_at) }));
    }
    // The reveal counts the nonces used in a whole number (check 4, "nonces"): "6" or [6] would
    // be taken for 6 by `<` here, where the offline verifier fails it.
    if (!Number.isInteger(reveal.document.rounds) || reveal.document.rounds < 0) {
      problems.push(gettext("the reveal's rounds %(rounds)s is not a whole number",
        { rounds: JSON.stringify(reveal.document.rounds) }));
    }
    const serverSeed = reveal.document.server_seed;
    const seedHash = await sha256Hex(hexToBytes(serverSeed));
    pair.seedMatches = seedHash === commitment.document.commitment && seedHash === reveal.document.commitment;
    if (!pair.seedMatches) problems.push(gettext("sha256(server seed) differs from the commitment"));
    const clientSeed = reveal.document.client_seed;
    const hkey = await hmacKey(serverSeed);
    const waiting = []; // what the log does not prove yet: not a failure, never "verified"
    // Each document's entry in the casino's signed public log must say what the document says.
    // A bundle without its anchors proves nothing there, and fails; a document still pending is
    // not proven either: its round is not called verified until the log proves it. (Checked
    // here: its checkpoints and the fetch time date a key registration still pending too.)
    const log = await window.SotaLog.checkAnchors(bundle, logKeys, opts.fetchedAt);
    const playerKeys = await registeredKeys(bundle, commitment.document.user_id, problems, logKeys, waiting, log);
    // Where the log took each round's settlement (an anchor that does not hold fails the log
    // check below; here it could only ask more signatures of the round).
    const settledSeqs = {};
    const actedSeqs = {}; // where the log took each round's decisions and moves, in its order
    const betSeqs = {}; // where the log took each round's bet
    const roundKey = window.SotaLog.roundKey; // 101, not "101" nor [101]
    for (const anchor of Array.isArray(bundle.anchors) ? bundle.anchors : []) {
      const seq = anchor && anchor.entry ? anchor.entry.seq : null;
      const key = anchor && anchor.of ? roundKey(anchor.of.round_id) : null;
      if (anchor && anchor.of && anchor.of.kind === "settlement" && Number.isInteger(seq)) settledSeqs[key] = seq;
      if (anchor && anchor.of && anchor.of.kind === "bet" && Number.isInteger(seq)) betSeqs[key] = seq;
      if (anchor && anchor.of && anchor.of.kind === "decision" && Number.isInteger(seq)) {
        actedSeqs[key] = [...(actedSeqs[key] || []), seq];
      }
    }
    for (const seqs of Object.values(actedSeqs)) seqs.sort((a, b) => a - b);
    const seen = new Set();
    const rounds = [];
    for (const [index, signed] of receipts.entries()) {
      const doc = signed.document;
      const row = { id: doc.round_id, nonce: doc.nonce, game: doc.game, checks: {}, note: "" };
      row.checks.signature = receiptsSigned[index];
      row.checks.seeds = doc.commitment === seedHash && doc.client_seed === clientSeed
        && doc.seed_pair_id === reveal.document.seed_pair_id;
      row.checks.nonce = Number.isInteger(doc.nonce) && doc.nonce >= 0
        && doc.nonce < reveal.document.rounds && !seen.has(doc.nonce);
      // Settled after the commitment was signed, and not after the seed was revealed.
      row.checks.order = timed(doc.settled_at) && commitment.document.created_at < doc.settled_at
        && doc.settled_at <= reveal.document.revealed_at;
      seen.add(doc.nonce);
      const makeStream = () => {
        const stream = new Stream(hkey, clientSeed, doc.nonce);
        stream.restart = () => new Stream(hkey, clientSeed, doc.nonce);
        return stream;
      };
      try {
        if (doc.game === "casino_war") {
          const replay = await replayCasinoWar(doc, makeStream());
          row.cards = replay.cards;
          row.result = replay.result;
          row.payout = replay.payout;
          row.checks.cards = same(replay.cards, doc.cards);
          // The stakes are {bet, tie_bet, raise}, whole numbers, the outcome holds exactly its
          // result, tie_bet_won and net, and the net is the payout less the stakes, as check 6
          // holds them.
          const stakes = doc.stakes;
          const shaped = same(Object.keys(stakes).sort(), ["bet", "raise", "tie_bet"])
            && [stakes.bet, stakes.tie_bet, stakes.raise].every(Number.isInteger);
          row.checks.outcome = shaped && warRulesAndStakesHold(doc.rules, stakes)
            && same(Object.keys(doc.outcome).sort(), ["net", "result", "tie_bet_won"])
            && replay.result === doc.outcome.result
            && replay.tieBetWon === doc.outcome.tie_bet_won
            && replay.raise === stakes.raise
            && doc.outcome.net === doc.payout - (stakes.bet + stakes.tie_bet + stakes.raise);
          row.checks.payout = replay.payout === doc.payout;
        } else if (doc.game === "sota") {
          const replay = window.SotaEngine.replayReceipt(doc, serverSeed);
          row.cards = replay.cards;
          row.result = sotaResult(replay.outcome, doc.rules);
          row.payout = replay.payout;
          row.checks.cards = same(replay.cards, doc.cards);
          const difference = outcomeDifference(doc.outcome, replay.outcome);
          // The stakes are {stake}, a positive whole number of sweets, as check 6 holds them,
          // and the rules list every option (the replay takes a default for one left out, as a
          // table's preset does, but a receipt names the rules it was played by, all of them).
          const stakes = doc.stakes;
          const shaped = Boolean(stakes) && typeof stakes === "object" && !Array.isArray(stakes)
            && same(Object.keys(stakes), ["stake"]) && Number.isInteger(stakes.stake) && stakes.stake > 0;
          const everyRule = same(Object.keys(doc.rules).sort(), Object.keys(window.SotaEngine.DEFAULTS).sort());
          // Each written as the service signs it (check 6): the replay reads `lead` "off", as a
          // request may say it, for null, but a form no signed document holds is not the
          // service's, and its readers may differ on what it means.
          const signedRules = window.SotaEngine.ruleSet(doc.rules);
          const reworded = Object.keys(doc.rules).sort()
            .find((name) => canonicalJson(doc.rules[name]) !== canonicalJson(signedRules[name]));
          row.checks.outcome = shaped && everyRule && reworded === undefined && difference === null;
          row.checks.payout = replay.payout === doc.payout;
          const notes = [];
          if (reworded !== undefined) {
            notes.push(gettext("the rules are not written as a signed document writes them: %(option)s is %(given)s, the service signs it as %(signed)s",
              { option: reworded, given: JSON.stringify(doc.rules[reworded]), signed: JSON.stringify(signedRules[reworded]) }));
          }
          if (difference) notes.push(difference);
          if (notes.length) row.note = notes.join("; ");
        } else {
          throw new Error(gettext("unknown game %(game)s", { game: JSON.stringify(doc.game) }));
        }
      } catch (error) {
        row.checks.replay = false;
        row.note = gettext("the replay failed: %(error)s", { error: String(error.message || error) });
      }
      const unsigned = [
        ...await signedActionProblems(doc, playerKeys, settledSeqs[roundKey(doc.round_id)] ?? null,
          actedSeqs[roundKey(doc.round_id)] ?? []),
        ...await signedBetProblems(doc, playerKeys, commitment.document.user_id, settledSeqs[roundKey(doc.round_id)] ?? null,
          betSeqs[roundKey(doc.round_id)] ?? null),
      ];
      row.checks.player = unsigned.length === 0;
      row.signedActions = Array.isArray(doc.signed_actions) ? doc.signed_actions.filter(Boolean).length : 0;
      row.signedBet = doc.signed_bet !== undefined && doc.signed_bet !== null;
      row.actionCount = Array.isArray(doc.actions) ? doc.actions.length : 0;
      if (unsigned.length) row.note = (row.note ? row.note + "; " : "") + unsigned.join("; ");
      const recorded = records && records.rounds[doc.round_id];
      if (recorded) row.checks.records = recorded.ok;
      row.recorded = recorded ? recorded.recorded : 0;
      row.ok = Object.values(row.checks).every(Boolean);
      // What differs from the records is said above, in the records' own words.
      const failed = Object.keys(row.checks).filter((name) => !row.checks[name] && name !== "records");
      if (failed.length) {
        problems.push(gettext("round %(round)s (nonce %(nonce)s): %(checks)s failed", { round: row.id, nonce: row.nonce, checks: failed.join(", ") })
          + (row.note ? " (" + row.note + ")" : ""));
      }
      rounds.push(row);
    }
    const missing = missingNonces(reveal.document.rounds, seen);
    if (missing) problems.push(gettext("no receipt for nonce %(nonce)s (a round may still be open)", { nonce: missing }));
    pair.logged = log.commitment;
    problems.push(...log.problems);
    if (pair.logged === "pending") waiting.push(gettext("the commitment"));
    if (log.reveal === "pending") waiting.push(gettext("the reveal"));
    for (const row of rounds) {
      row.logged = log.rounds[window.SotaLog.roundKey(row.id)];
      if (row.logged === false) row.ok = false;
      if (row.logged === "pending") {
        row.waiting = row.ok;
        row.ok = false;
        waiting.push(gettext("round %(round)s", { round: row.id }));
      }
    }
    for (const signed of ownTrust ? log.checkpoints : []) {
      // Each checkpoint the anchors may be proved into is witnessed, one a retired key signed too
      // (its holder can still sign with it, over any history): checked by the key that signed it.
      let signer = null;
      for (const candidate of logKeys) {
        if (await window.SotaLog.signedBy(candidate, signed)) {
          signer = candidate;
          break;
        }
      }
      if (signer) await window.SotaLog.show(await window.SotaLog.observe(signed, signer));
    }
    // A round is verified only within a pair that holds: trusted key, signed and unforged
    // commitment and reveal, the seed that hashes to it, and records that agree.
    if (problems.length) for (const row of rounds) row.ok = false;
    // Nor while something the log does not prove yet stands behind it (a registration too).
    for (const row of rounds) {
      if (waiting.length && row.ok) {
        row.ok = false;
        row.waiting = true;
      }
    }
    return { pair, rounds, problems, records, waiting, notices };
  }

  function sotaResult(outcome, rules) {
    const w = outcome.winner;
    // The player's win said plainly here, as a receipt's list says it; any other as the game's page.
    const who = w === 0 || w === "team_0" ? gettext("You win") : window.SotaI18n.sotaWinner(w);
    return who + " · " + ngettext("%(num)s trick", "%(num)s tricks", outcome.tricks.length)
      + (rules && rules.prisoners_of_war ? " · " + gettext("prisoners of war") : "");
  }

  // ---- the page -------------------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "class") node.className = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  const RESULTS = {
    win: gettext("You win"), lose: gettext("Dealer wins"), surrender: gettext("You surrendered"),
    war_win: gettext("You won the war"), war_tie: gettext("War tied: you win"), war_lose: gettext("Dealer won the war"),
  };

  // Receipts count chips in hundredths and sweets whole; players read chips and sweets.
  function amount(value, game) {
    if (value === undefined || value === null) return "–";
    return game === "casino_war" ? window.SotaI18n.chipsText(value) : window.SotaI18n.sweetsText(value);
  }

  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  function cardText(code) {
    if (code[0] === "X") return el("span", { class: "card-text" }, gettext("Joker"));
    const rank = code[0] === "T" ? "10" : code[0];
    return el("span", { class: "card-text" + ("DH".includes(code[1]) ? " red" : "") }, rank + SUITS[code[1]]);
  }

  /* What the comparison with the player's own records covered, said plainly. */
  function recordsSentence(report) {
    const records = report.records;
    if (!records) return gettext("This browser keeps no records, so a re-committed pair or a changed decision cannot be ruled out here.");
    const shown = records.commitment === true
      ? gettext("The commitment equals the one this browser was shown before play")
      : gettext("This browser holds no record of this pair's commitment (a re-commitment cannot be ruled out here)");
    const n = records.recordedActions;
    const acts = n
      ? ngettext("the decisions and moves recorded here for %(num)s round equal the receipts.",
        "the decisions and moves recorded here for %(num)s rounds equal the receipts.", n)
      : gettext("no decision or move of these rounds was recorded here.");
    // The stakes too once every bet compared recorded them (records kept before hold none).
    const staked = records.recordedStakes === records.recordedBets;
    const rulesAndStakes = ngettext("The rules and stakes of %(num)s bet recorded here equal its receipt's.",
      "The rules and stakes of %(num)s bets recorded here equal their receipts'.", records.recordedBets);
    const rulesOnly = ngettext("The rules of %(num)s bet recorded here equal its receipt's.",
      "The rules of %(num)s bets recorded here equal their receipts'.", records.recordedBets);
    const bets = records.recordedBets ? " " + (staked ? rulesAndStakes : rulesOnly) : "";
    return shown + "; " + acts + bets;
  }

  function playerSentence(report) {
    const n = report.rounds.reduce((sum, row) => sum + (row.signedActions || 0), 0);
    const bets = report.rounds.filter((row) => row.signedBet).length;
    return (n ? " " + ngettext("%(num)s decision or move carries your own signature, checked against your key as the log registered it.",
      "%(num)s decisions and moves carry your own signature, checked against your key as the log registered it.", n) : "")
      + (bets ? " " + ngettext("%(num)s bet carries your own signature over its seed pair, nonce, stakes and rules.",
        "%(num)s bets carry your own signature over their seed pair, nonce, stakes and rules.", bets) : "");
  }

  function mark(ok) {
    return el("span", { class: ok ? "check-ok" : "check-bad" }, ok ? "✓" : "✗");
  }

  /* A document's place in the public log: in it, contradicted, pending, or not anchored. */
  function logMark(logged) {
    if (logged === "pending") return el("small", { class: "muted" }, gettext("not yet anchored"));
    if (logged === null || logged === undefined) return el("small", { class: "muted" }, gettext("not anchored"));
    return mark(logged);
  }

  function render(target, report) {
    target.replaceChildren();
    const waiting = report.waiting || [];
    const failed = report.problems.length > 0;
    const allOk = !failed && waiting.length === 0;
    const verified = report.rounds.filter((r) => r.ok).length;
    // A verdict of one short line, the details after it in normal weight: in bold, the whole
    // of it took some twenty lines of a phone's screen. A phone folds the details of a pair
    // that verified; a failure's or a wait's stay open, as the player has something to read.
    const verdict = !failed && waiting.length
      ? "… " + gettext("Not verified yet.")
      : allOk
        ? "✓ " + ngettext("All %(num)s round verified.", "All %(num)s rounds verified.", report.rounds.length)
        : "✗ " + ngettext("%(verified)s of %(num)s round verified.", "%(verified)s of %(num)s rounds verified.", report.rounds.length, { verified });
    const details = !failed && waiting.length
      ? ngettext("Not verified yet: %(num)s document is not yet in a signed checkpoint of the casino's public log (%(what)s), so the log proves nothing about it yet. Verify again later: a checkpoint is usually signed within seconds.",
        "Not verified yet: %(num)s documents are not yet in a signed checkpoint of the casino's public log (%(what)s), so the log proves nothing about them yet. Verify again later: a checkpoint is usually signed within seconds.",
        waiting.length, { what: waiting.join(", ") })
      : allOk
        ? ngettext("All %(num)s round verified against the key pinned in this browser: every signature, the seeds, and a full replay of each round here (Casino War: cards, result and payout; Sota: the deck, every trick, the winner, how the game ended and the payout) equal the signed receipts.",
          "All %(num)s rounds verified against the key pinned in this browser: every signature, the seeds, and a full replay of each round here (Casino War: cards, result and payout; Sota: the deck, every trick, the winner, how the game ended and the payout) equal the signed receipts.",
          report.rounds.length) + " " + recordsSentence(report) + playerSentence(report)
        : report.problems.join("; ") + ".";
    const folded = allOk && window.matchMedia("(max-width: 700px)").matches;
    const fold = el("details", { class: "verify-details" }, el("summary", { class: "verdict" }, verdict), el("p", {}, details));
    fold.open = !folded;
    const summary = el("div", { class: "verify-summary " + (allOk ? "ok" : failed ? "bad" : "working"), "data-testid": "verify-summary", role: "status" }, fold);
    target.append(summary);
    for (const notice of report.notices || []) {
      target.append(el("p", { class: "flash info", role: "note", "data-testid": "verify-notice" }, notice));
    }
    target.append(el("p", {},
      gettext("Key pinned in this browser") + " ", mark(report.pair.keyMatches),
      " · " + gettext("commitment as shown before play") + " ", report.pair.commitmentRecorded === null ? el("small", { class: "muted" }, gettext("no record")) : mark(report.pair.commitmentRecorded),
      " · " + gettext("commitment signature") + " ", mark(report.pair.commitmentSigned),
      " · " + gettext("reveal signature") + " ", mark(report.pair.revealSigned),
      " · " + gettext("sha256(server seed) = commitment") + " ", mark(report.pair.seedMatches),
      gettext(" · commitment in the public log "), logMark(report.pair.logged)));
    if (!report.rounds.length) return;
    // The verdict comes right after the round: fourteen columns are wider than a laptop's
    // panel, and the detail after it may scroll (or, below a laptop's width, make a card).
    const columns = [gettext("Round"), gettext("Verdict"), gettext("Nonce"), gettext("Game"), gettext("Cards (recomputed)"),
      gettext("Result"), gettext("Paid back"), gettext("Signed"), gettext("Seeds"), gettext("Cards"), gettext("Outcome"),
      gettext("Your signature"), gettext("Your records"), gettext("In the log")];
    const head = el("tr", {}, ...columns.map((h) => el("th", { scope: "col" }, h)));
    const nothingToSign = gettext("nothing to sign");
    const body = el("tbody");
    for (const row of report.rounds) {
      const cards = el("span", { class: "card-row tight" });
      const shown = (row.cards || []).slice(0, 8);
      for (const code of shown) cards.append(cardText(code), " ");
      if ((row.cards || []).length > shown.length) {
        cards.append(el("small", { class: "muted" }, "… " + ngettext("%(num)s card", "%(num)s cards", row.cards.length)));
      }
      const outcomeOk = Boolean(row.checks.outcome && row.checks.payout);
      // "unsigned" only where the player made a choice that could have been signed.
      const playerSigned = row.signedActions || row.signedBet || !row.checks.player ? mark(row.checks.player)
        : row.actionCount ? el("small", { class: "muted" }, gettext("unsigned"))
          : el("span", { class: "muted", role: "img", title: nothingToSign, "aria-label": nothingToSign }, "—");
      const cells = [
        el("td", {}, row.id),
        el("td", {}, row.ok ? el("span", { class: "badge ok" }, gettext("verified"))
          : row.waiting && !failed ? el("span", { class: "badge open" }, gettext("not yet anchored"))
            : el("span", { class: "badge bad" }, gettext("FAILED"))),
        el("td", {}, row.nonce), el("td", {}, row.game === "casino_war" ? "Casino War" : "Sota"),
        el("td", { class: "whole-line" }, cards), el("td", {}, RESULTS[row.result] || row.result || "–"),
        el("td", { class: "num" }, amount(row.payout, row.game)),
        el("td", {}, mark(row.checks.signature)), el("td", {}, mark(row.checks.seeds && row.checks.nonce)),
        el("td", {}, mark(row.checks.cards)),
        el("td", { class: row.note ? "whole-line" : "" }, mark(outcomeOk), row.note ? el("small", { class: "muted" }, " " + row.note) : ""),
        el("td", { "data-testid": "player-signed" }, playerSigned),
        el("td", {}, "records" in row.checks ? mark(row.checks.records) : el("small", { class: "muted" }, gettext("none"))),
        el("td", { "data-log": String(row.logged) }, logMark(row.logged)),
      ];
      cells.forEach((cell, index) => cell.setAttribute("data-label", columns[index]));
      body.append(el("tr", { "data-round": row.id, "data-nonce": row.nonce, "data-ok": row.ok ? "1" : "0" }, ...cells));
    }
    target.append(el("table", { class: "data cards verify-rounds" }, el("thead", {}, head), body));
  }

  async function run(button) {
    const target = document.getElementById(button.dataset.target);
    target.replaceChildren(el("p", { class: "verify-summary working", role: "status" }, gettext("Checking every signature and replaying every round…")));
    try {
      if (!subtle) throw new Error(gettext("this page needs WebCrypto (a secure context: HTTPS or localhost)"));
      // By this browser's clock as it asks: the service signs a checkpoint over the whole log
      // when a bundle is fetched, so a document still pending in it past the bound fails.
      const fetchedAt = window.SotaLog.written(new Date());
      const response = await fetch(button.dataset.bundleUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(gettext("could not load the bundle (HTTP %(status)s)", { status: response.status }));
      await window.SotaRecords.keyChecked(); // the key this page shows may move the pin first
      const report = await verifyBundle(await window.SotaJson.answerOf(response), { fetchedAt });
      render(target, report);
      // As the offline verifier's known-keys file: a bundle that passes under a key the pinned
      // key handed on to, by signed key changes, moves the pin there.
      if (report.pair.keyChain && !report.problems.length) window.SotaRecords.followChain(report.pair.keyChain);
    } catch (error) {
      const message = /Ed25519|Algorithm|NotSupported/i.test(String(error))
        ? gettext("This browser cannot check Ed25519 signatures; use the verifier script instead.")
        : String(error.message || error);
      target.replaceChildren(el("p", { class: "verify-summary bad", role: "status" }, "✗ " + message));
    }
  }

  /* The next pair's client seed is suggested by this browser, never by the casino: a casino
   * that knows its next server seed could otherwise pick a suggestion that deals badly. */
  function suggestClientSeed() {
    const field = document.querySelector("input[data-client-seed]");
    if (!field || field.value || !window.crypto || !window.crypto.getRandomValues) return;
    field.value = bytesToHex(window.crypto.getRandomValues(new Uint8Array(8)));
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const button of document.querySelectorAll("button[data-verify]")) {
      button.addEventListener("click", () => run(button));
      button.disabled = false;  // served disabled: a click before this script runs would do nothing
    }
    suggestClientSeed();
  });

  window.SotaVerify = { canonicalJson, verifyBundle, Stream, shuffledPrefix, canonicalShoe, hmacKey, ed25519Key, bytesToHex };
})();
