/* Sota (docs/rules.md, the conventions of docs/rules.md) as a second, independent engine.
 *
 * The page replays every Sota receipt with it, so a game is called verified only when its deck,
 * every trick of its log, its winner, how it ended and its payout equal the signed receipt. It is
 * written from the rules, not translated from the server's engine, and a differential test plays
 * thousands of random rule sets through both and requires identical receipts.
 *
 * Synchronous on purpose: a game may shuffle hundreds of times mid-play, so the round stream
 * (HMAC-SHA256, docs/fairness.md) is computed here with a small SHA-256 of its own rather than
 * awaiting WebCrypto for every block.
 *
 * Piles are arrays with the top card first; a won pile is a stack with its top card last.
 */
"use strict";

(function (root) {
  // ---- SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104) ------------------------------------------

  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const W = new Uint32Array(64);

  function sha256(bytes) {
    const length = bytes.length;
    const padded = new Uint8Array(((length + 9 + 63) >> 6) << 6);
    padded.set(bytes);
    padded[length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
    view.setUint32(padded.length - 4, (length << 3) >>> 0);
    let h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a;
    let h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
    for (let offset = 0; offset < padded.length; offset += 64) {
      for (let t = 0; t < 16; t++) W[t] = view.getUint32(offset + 4 * t);
      for (let t = 16; t < 64; t++) {
        const x = W[t - 15], y = W[t - 2];
        const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        W[t] = (W[t - 16] + s0 + W[t - 7] + s1) | 0;
      }
      let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
      for (let t = 0; t < 64; t++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t] + W[t]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
    }
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    [h0, h1, h2, h3, h4, h5, h6, h7].forEach((word, i) => outView.setUint32(4 * i, word >>> 0));
    return out;
  }

  function concat(a, b) {
    const joined = new Uint8Array(a.length + b.length);
    joined.set(a);
    joined.set(b, a.length);
    return joined;
  }

  function hmacSha256(key, message) {
    let block = key.length > 64 ? sha256(key) : key;
    const padded = new Uint8Array(64);
    padded.set(block);
    const inner = padded.map((byte) => byte ^ 0x36);
    const outer = padded.map((byte) => byte ^ 0x5c);
    block = sha256(concat(inner, message));
    return sha256(concat(outer, block));
  }

  function hexToBytes(hex) {
    if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/i.test(hex)) {
      throw new Error("not hex: " + String(hex).slice(0, 20));
    }
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }

  const utf8 = new TextEncoder();

  /* The round stream block(0) ‖ block(1) ‖ …, block(k) = HMAC-SHA256(server seed,
   * "{client seed}:{nonce}:{k}"), read as rejection-sampled uniform integers. */
  class Stream {
    constructor(serverSeedHex, clientSeed, nonce) {
      this.key = hexToBytes(serverSeedHex);
      this.prefix = clientSeed + ":" + nonce + ":";
      this.block = new Uint8Array(0);
      this.offset = 0;
      this.nextBlock = 0;
    }

    word() {
      if (this.offset + 4 > this.block.length) {
        const rest = this.block.slice(this.offset);
        this.block = concat(rest, hmacSha256(this.key, utf8.encode(this.prefix + this.nextBlock++)));
        this.offset = 0;
      }
      const b = this.block, i = this.offset;
      this.offset += 4;
      return ((b[i] * 256 + b[i + 1]) * 256 + b[i + 2]) * 256 + b[i + 3];
    }

    uniform(n) {
      const limit = 4294967296 - (4294967296 % n);
      for (;;) {
        const x = this.word();
        if (x < limit) return x % n;
      }
    }
  }

  /* The forward Fisher–Yates shuffle: for i = 0 … n−2 swap i with i + uniform(n − i). */
  function shuffle(cards, stream) {
    const out = cards.slice();
    for (let i = 0; i < out.length - 1; i++) {
      const j = i + stream.uniform(out.length - i);
      const card = out[i];
      out[i] = out[j];
      out[j] = card;
    }
    return out;
  }

  // ---- cards and rule sets ---------------------------------------------------------------------

  const RANKS = "23456789TJQKA";
  const RANK_VALUE = { X: 15 };
  for (let i = 0; i < RANKS.length; i++) RANK_VALUE[RANKS[i]] = i + 2;
  const DECK_RANKS = {
    standard52: RANKS, jokers54: RANKS, pjanitsa36: RANKS.slice(4), piquet32: RANKS.slice(5),
  };

  function canonicalDeck(kind) {
    const ranks = DECK_RANKS[kind];
    if (!ranks) throw new Error("unknown deck " + JSON.stringify(kind));
    const deck = [];
    for (const suit of "CDHS") for (const rank of ranks) deck.push(rank + suit);
    if (kind === "jokers54") deck.push("X1", "X2");
    return deck;
  }

  const DEFAULTS = {
    seats: 2, deck: "standard52", war_down: 3, won_cards: "bottom", gather: "winner_first",
    short: "lose", multi_tie: "tied_only", end: "all_cards", max_tricks: 2000, lead: null,
    peace: false, auto_war_twos: false, underdog: false, prisoners_of_war: false, teams: false,
  };
  const CHOICES = {
    seats: [2, 3, 4],
    deck: Object.keys(DECK_RANKS),
    war_down: [3, 1, "by_rank"],
    won_cards: ["bottom", "won_pile"],
    gather: ["winner_first", "table", "shuffled"],
    short: ["lose", "last_card_up"],
    multi_tie: ["tied_only", "tied_only_return", "all"],
    end: ["all_cards", "single_pass"],
  };
  const SWITCHES = ["peace", "auto_war_twos", "underdog", "prisoners_of_war", "teams"];
  const PRESETS = {
    nordic: {},
    english: { war_down: 1 },
    tod_und_leben: { deck: "piquet32", end: "single_pass" },
    pjanitsa: { deck: "pjanitsa36" },
    rauha: { peace: true },
    syrian: { war_down: "by_rank" },
    kids_15_min: { max_tricks: 300 },
  };
  // Face-down cards of a by_rank war by the tied rank; a joker lays one, as an ace does.
  const BY_RANK_WIDTH = { T: 10, J: 10, Q: 10, K: 10, A: 1, X: 1 };
  for (const rank of "23456789") BY_RANK_WIDTH[rank] = Number(rank);

  function wholeIn(value, low, high) {
    return typeof value === "number" && Number.isInteger(value) && value >= low && value <= high;
  }

  /* A complete rule set from options (defaults for what is missing); throws on a bad one. */
  function ruleSet(options) {
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      throw new Error("rules must be an object of options");
    }
    for (const name of Object.keys(options)) {
      if (!(name in DEFAULTS)) throw new Error("unknown rule option " + JSON.stringify(name));
    }
    const rules = Object.assign({}, DEFAULTS, options);
    if (rules.lead === "off") rules.lead = null;
    for (const [name, valid] of Object.entries(CHOICES)) {
      if (!valid.includes(rules[name])) {
        throw new Error(name + " must be one of " + valid.join(", ") + " (got " + JSON.stringify(rules[name]) + ")");
      }
    }
    if (!wholeIn(rules.max_tricks, 1, 100000)) throw new Error("max_tricks must be 1 to 100000");
    if (rules.lead !== null && !wholeIn(rules.lead, 1, 54)) throw new Error("lead must be off or 1 to 54");
    for (const name of SWITCHES) {
      if (typeof rules[name] !== "boolean") throw new Error(name + " must be true or false");
    }
    if (rules.teams && rules.seats !== 4) throw new Error("teams needs 4 seats");
    return rules;
  }

  function presetRules(name) {
    if (!Object.prototype.hasOwnProperty.call(PRESETS, name)) throw new Error("unknown preset " + JSON.stringify(name));
    return ruleSet(PRESETS[name]);
  }

  // ---- one game ----------------------------------------------------------------------------------

  const PLAYER = 0;

  class AwaitingMove {
    constructor(pending) { this.pending = pending; }
  }

  class Game {
    constructor(rules, deck, stream, moves) {
      this.rules = rules;
      this.stream = stream;
      this.moves = moves;
      this.movesUsed = 0;
      const seats = rules.seats;
      this.seats = seats;
      const dealt = deck.length - (deck.length % seats);
      this.piles = [];
      for (let s = 0; s < seats; s++) this.piles.push([]);
      for (let i = 0; i < dealt; i++) this.piles[i % seats].push(deck[i]);
      this.won = this.piles.map(() => []);
      this.outOfPlay = [];
      this.log = [];
      this.tricks = 0;
      this.winner = null;
      this.endedBy = null;
      this.sign = rules.peace ? -1 : 1;
      this.singlePass = rules.end === "single_pass";
      this.pow = rules.prisoners_of_war;
      // Won cards go to a won pile under won_pile, single_pass and Prisoners of War; it is
      // laid from except under single_pass.
      this.toWonPile = rules.won_cards === "won_pile" || this.singlePass || this.pow;
      this.wonPileLaid = this.toWonPile && !this.singlePass;
      this.steps = [];
      this.allIn = new Set(); // "step:seat" where a short seat laid everything under `lose`
    }

    strength(card) {
      return this.sign * RANK_VALUE[card[0]];
    }

    holds(seat) {
      return this.piles[seat].length + this.won[seat].length;
    }

    canLay(seat) {
      return this.piles[seat].length + (this.wonPileLaid ? this.won[seat].length : 0);
    }

    shuffled(cards) {
      if (cards.length < 2) return cards;
      if (!this.stream) throw new Error("this game shuffles in play: it needs the round stream");
      return shuffle(cards, this.stream);
    }

    /* The seat's next `count` cards (the caller knows it can lay them). */
    lay(seat, count, allIn) {
      const pile = this.piles[seat];
      const cards = pile.splice(0, count);
      const missing = count - cards.length;
      if (missing === 0) return cards;
      if (this.pow) return cards.concat(this.prisoners(seat, missing, allIn, cards.length));
      // The won pile, read top to bottom, is shuffled into the new draw pile.
      const turned = this.won[seat].reverse();
      this.won[seat] = [];
      pile.push(...this.shuffled(turned));
      return cards.concat(pile.splice(0, missing));
    }

    /* A seat short under `lose`: all it holds, face down; under single_pass its never-played
     * won pile follows as it lies, top first. */
    layAll(seat) {
      const cards = this.lay(seat, this.canLay(seat), true);
      if (this.singlePass) {
        cards.push(...this.won[seat].reverse());
        this.won[seat] = [];
      }
      return cards;
    }

    // -- Prisoners of War --

    prisoners(seat, count, allIn, alreadyLaid) {
      const stack = this.won[seat];
      const topFirst = stack.slice().reverse();
      let chosen;
      if (allIn) chosen = topFirst.slice(0, count);
      else if (seat === PLAYER && topFirst.length > 1) chosen = this.playerMove(count, topFirst, alreadyLaid);
      else chosen = this.houseMove(topFirst, count);
      for (const card of chosen) stack.splice(stack.indexOf(card), 1);
      return chosen;
    }

    /* Dealer and CPU: the best card face up, the weakest face down, weakest first; equal
     * ranks in won-pile order from the top. */
    houseMove(topFirst, count) {
      let best = 0;
      for (let i = 1; i < topFirst.length; i++) {
        if (this.strength(topFirst[i]) > this.strength(topFirst[best])) best = i;
      }
      const rest = topFirst.filter((_, i) => i !== best);
      const order = rest.map((card, i) => [this.strength(card), i, card]);
      order.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      return order.slice(0, count - 1).map((entry) => entry[2]).concat([topFirst[best]]);
    }

    playerMove(count, options, alreadyLaid) {
      if (this.movesUsed === this.moves.length) {
        throw new AwaitingMove({ seat: PLAYER, count, options, table: this.tableView(alreadyLaid) });
      }
      const number = this.movesUsed + 1;
      const move = this.moves[this.movesUsed++];
      if (!Array.isArray(move)) throw new Error("move " + number + " must be a list of cards");
      if (move.length !== count) throw new Error("move " + number + " must lay exactly " + count + " cards (got " + move.length + ")");
      for (const card of move) {
        if (typeof card !== "string" || !options.includes(card)) {
          throw new Error("move " + number + ": " + JSON.stringify(card) + " is not among the won cards " + options.join(", "));
        }
      }
      if (new Set(move).size !== move.length) throw new Error("move " + number + " lays the same card twice");
      return move.slice();
    }

    /* The trick so far as the player sees it: face-down cards are null. */
    tableView(playerLaid) {
      const seen = this.piles.map(() => []);
      this.steps.forEach((step, index) => {
        step.forEach((cards, seat) => {
          if (this.allIn.has(index + ":" + seat)) {
            for (const _ of cards) seen[seat].push(null);
          } else if (cards.length) {
            for (let i = 0; i < cards.length - 1; i++) seen[seat].push(null);
            seen[seat].push(cards[cards.length - 1]);
          }
        });
      });
      for (let i = 0; i < playerLaid; i++) seen[PLAYER].push(null);
      return seen;
    }

    // -- a trick --

    /* The top face-up strength among `seats` and the seats that hold it (pjanitsa's six above
     * an ace when both lie face up in the step). */
    best(seats, up) {
      let values = seats.map((s) => this.strength(up[s]));
      if (this.rules.deck === "pjanitsa36") {
        const ranks = seats.map((s) => up[s][0]);
        if (ranks.includes("6") && ranks.includes("A")) {
          values = seats.map((s, i) => (ranks[i] === "6" ? this.sign * 15 : values[i]));
        }
      }
      const top = Math.max(...values);
      const tied = seats.filter((_, i) => values[i] === top);
      return { card: up[tied[0]], tied };
    }

    playTrick() {
      const rules = this.rules, seats = this.seats;
      const up = new Array(seats).fill(null);
      const first = new Array(seats).fill(null).map(() => []);
      this.steps = [first];
      this.allIn = new Set();
      const active = [];
      for (let s = 0; s < seats; s++) if (this.holds(s)) active.push(s);
      for (const s of active) {
        const card = this.piles[s].length ? this.piles[s].shift() : this.lay(s, 1, false)[0];
        first[s] = [card];
        up[s] = card;
      }
      let contenders = active, faceUpNow = active;
      let returned = null, winner = null;
      const out = new Set();
      for (;;) {
        const { card: top, tied } = this.best(contenders, up);
        let fighters;
        if (rules.auto_war_twos && faceUpNow.some((s) => up[s][0] === "2")) {
          fighters = contenders;
        } else if (tied.length === 1) {
          winner = tied[0];
          break;
        } else {
          fighters = tied;
          if (this.steps.length === 1 && tied.length < contenders.length) {
            if (rules.multi_tie === "all") {
              fighters = contenders;
            } else if (rules.multi_tie === "tied_only_return") {
              returned = new Array(seats).fill(null);
              for (const s of contenders) {
                if (!tied.includes(s)) {
                  returned[s] = up[s];
                  this.piles[s].push(up[s]);
                }
              }
            }
          }
        }
        const down = rules.war_down === "by_rank" ? BY_RANK_WIDTH[top[0]] : rules.war_down;
        const need = down + 1;
        const step = new Array(seats).fill(null).map(() => []);
        this.steps.push(step);
        const index = this.steps.length - 1;
        if (rules.short === "lose") {
          const able = fighters.filter((s) => this.canLay(s) >= need);
          for (const s of fighters) {
            if (!able.includes(s)) {
              step[s] = this.layAll(s);
              this.allIn.add(index + ":" + s);
              out.add(s);
            } else if (able.length > 1) {
              step[s] = this.lay(s, need, false);
              up[s] = step[s][step[s].length - 1];
            }
          }
          if (able.length <= 1) {
            winner = able.length ? able[0] : null;
            break;
          }
          contenders = faceUpNow = able;
        } else {
          faceUpNow = [];
          for (const s of fighters) {
            const have = this.canLay(s);
            if (have) { // with none, its tied face-up card stands for it
              step[s] = this.lay(s, Math.min(have, need), false);
              up[s] = step[s][step[s].length - 1];
              faceUpNow.push(s);
            }
          }
          if (!faceUpNow.length) break; // nobody can lay: the war is undecided
          contenders = fighters;
        }
      }
      if (rules.underdog && winner !== null && this.steps.length > 1) winner = this.underdog(winner, out);
      this.gather(winner, returned);
    }

    /* The first seat (in seat order) that lost the war with a jack among its face-down cards. */
    underdog(winner, out) {
      for (let s = 0; s < this.seats; s++) {
        if (s === winner || out.has(s)) continue;
        for (const step of this.steps.slice(1)) {
          if (step[s].slice(0, -1).some((card) => card[0] === "J")) return s;
        }
      }
      return winner;
    }

    gather(winner, returned) {
      const steps = this.steps;
      const inPot = steps.map((step, index) =>
        step.map((cards, seat) => (index === 0 && returned && returned[seat] !== null ? [] : cards)));
      let pot = [];
      for (const step of inPot) {
        if (this.rules.gather === "winner_first" && winner !== null) {
          pot.push(...step[winner]);
          step.forEach((cards, seat) => { if (seat !== winner) pot.push(...cards); });
        } else {
          for (const cards of step) pot.push(...cards);
        }
      }
      if (winner === null) {
        this.outOfPlay.push(...pot);
      } else {
        if (this.rules.gather === "shuffled") pot = this.shuffled(pot);
        if (this.toWonPile) this.won[winner].push(...pot.slice().reverse()); // first gathered on top
        else this.piles[winner].push(...pot);
      }
      this.tricks += 1;
      const trick = {
        laid: this.piles.map((_, seat) => [].concat(...steps.map((step) => step[seat]))),
        wars: steps.length - 1,
        winner,
        counts: this.piles.map((_, seat) => this.holds(seat)),
        steps: steps.map((step) => step.map((cards) => cards.length)),
      };
      if (returned) trick.returned = returned.map((card) => (card === null ? [] : [card]));
      this.log.push(trick);
    }

    // -- the end --

    side(seat) {
      return this.rules.teams ? ["team_0", "team_1"][seat] : seat;
    }

    sideScores() {
      const per = this.piles.map((_, s) => (this.singlePass ? this.won[s].length : this.holds(s)));
      return this.rules.teams ? [per[0] + per[2], per[1] + per[3]] : per;
    }

    lastSideStanding() {
      const alive = [];
      for (let s = 0; s < this.seats; s++) if (this.holds(s)) alive.push(s);
      const sides = new Set(alive.map((s) => (this.rules.teams ? s % 2 : s)));
      if (sides.size > 1) return false;
      if (alive.length) {
        this.winner = this.side(this.rules.teams ? alive[0] % 2 : alive[0]);
        this.endedBy = "last_seat";
      } else {
        this.winner = "draw";
        this.endedBy = "no_cards";
      }
      return true;
    }

    endByScore(reason) {
      const scores = this.sideScores();
      const top = Math.max(...scores);
      const leaders = [];
      scores.forEach((score, side) => { if (score === top) leaders.push(side); });
      this.winner = leaders.length === 1 ? this.side(leaders[0]) : "draw";
      this.endedBy = reason;
    }

    play() {
      const rules = this.rules;
      for (;;) {
        if (this.singlePass && this.piles.some((pile) => !pile.length)) return this.endByScore("single_pass");
        this.playTrick();
        if (this.lastSideStanding()) return;
        if (rules.lead !== null) {
          const [top, second] = this.sideScores().sort((a, b) => b - a);
          if (top - second >= rules.lead) return this.endByScore("lead");
        }
        if (this.tricks >= rules.max_tricks) return this.endByScore("max_tricks");
      }
    }
  }

  /* Play a game from its rule set and either the round stream (`stream`: the deck is shuffled
   * from it, and later shuffles continue it) or a deal order (`deck`). `moves` are the player's
   * Prisoners of War moves. Returns {status, winner, tricks, ended_by, pending, deck, movesUsed}. */
  function playGame(rules, { stream = null, deck = null, moves = [] } = {}) {
    rules = ruleSet(rules);
    if (moves.length && !rules.prisoners_of_war) throw new Error("moves are made only under prisoners_of_war");
    const order = deck ? deck.slice() : shuffle(canonicalDeck(rules.deck), stream);
    const game = new Game(rules, order, stream, moves);
    let pending = null;
    try {
      game.play();
    } catch (error) {
      if (!(error instanceof AwaitingMove)) throw error;
      pending = error.pending;
    }
    if (pending === null && game.movesUsed < moves.length) {
      const made = game.movesUsed + (game.movesUsed === 1 ? " move" : " moves");
      throw new Error("the game ended after " + made + "; moves sent: " + moves.length);
    }
    return {
      status: pending === null ? "settled" : "awaiting_move",
      winner: pending === null ? game.winner : null,
      tricks: game.log,
      ended_by: pending === null ? game.endedBy : null,
      pending,
      deck: order,
      movesUsed: game.movesUsed,
    };
  }

  /* What a settled game credits back (docs/rules.md): alone, seats × stake for a win; with
   * teams, 2 × stake when the player's team wins; a draw returns the stake. */
  function payout(rules, winner, stake) {
    if (winner === "draw") return stake;
    if (rules.teams) return winner === "team_0" ? 2 * stake : 0;
    return winner === PLAYER ? rules.seats * stake : 0;
  }

  /* Replay a Sota receipt from the revealed server seed: what the receipt should say. */
  function replayReceipt(doc, serverSeedHex) {
    const rules = ruleSet(doc.rules);
    const stream = new Stream(serverSeedHex, doc.client_seed, doc.nonce);
    const game = playGame(rules, { stream, moves: doc.actions });
    if (game.status !== "settled") throw new Error("the receipt's moves stop the game before its end");
    return {
      cards: game.deck,
      outcome: { winner: game.winner, tricks: game.tricks, ended_by: game.ended_by },
      payout: payout(rules, game.winner, doc.stakes.stake),
    };
  }

  const api = {
    sha256, hmacSha256, hexToBytes, Stream, shuffle, canonicalDeck, ruleSet, presetRules,
    PRESETS, DEFAULTS, playGame, payout, replayReceipt,
  };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.SotaEngine = api;
})(typeof window === "object" ? window : globalThis);
