-- Players, rounds and money moves in bulk, beside what bench/console_pages.py seeds (run it
-- first: its first settled round and active seed pair are the templates):
--   psql -d DATABASE -f bench/large_players.sql
-- 100k players (user ids 1001..101000), 4 accounts each, an active seed pair, 400k rounds
-- (every 5th round the whale's, user 1001), bet + settle transfers, 5 postings a round.
\set ON_ERROR_STOP on
\timing on
SELECT setval('users_id_seq', 1000);
INSERT INTO users (id, username, password_hash, role, locked, created_at)
SELECT 1000 + n, 'scalep' || n, 'x', 'player', false,
       now() - interval '90 days' + (n * interval '90 days' / 100000)
FROM generate_series(1, 100000) n;
-- account ids: 1000000 + 4*n + k
INSERT INTO accounts (id, name, user_id, kind, currency, balance)
SELECT 1000000 + 4*n + k,
       CASE k WHEN 0 THEN 'player:' || (1000+n) || ':chips' WHEN 1 THEN 'player:' || (1000+n) || ':sweets'
              WHEN 2 THEN 'escrow:chips:' || (1000+n) ELSE 'house:chips:' || (1000+n) END,
       1000 + n, CASE k WHEN 0 THEN 'player' WHEN 1 THEN 'player' WHEN 2 THEN 'escrow' ELSE 'house' END,
       CASE k WHEN 1 THEN 'sweets' ELSE 'chips' END, 0
FROM generate_series(1, 100000) n, generate_series(0, 3) k;
-- seed pair id 1000000 + n
INSERT INTO seed_pairs (id, user_id, status, server_seed, commitment, client_seed, next_nonce,
  commitment_document, commitment_signature, created_at, activated_at)
SELECT 1000000 + n, 1000 + n, 'active', s.server_seed, s.commitment, s.client_seed, 0,
  s.commitment_document, s.commitment_signature,
  now() - interval '90 days' + (n * interval '90 days' / 100000),
  now() - interval '90 days' + (n * interval '90 days' / 100000)
FROM generate_series(1, 100000) n, (SELECT * FROM seed_pairs WHERE status = 'active' LIMIT 1) s;
-- rounds: id 1000000 + i, i in 1..400000
CREATE TEMP TABLE r AS
SELECT i, 1000000 + i AS id,
       CASE WHEN i % 5 = 0 THEN 1 ELSE (i % 100000) + 1 END AS n,
       now() - interval '90 days' + (i * interval '90 days' / 400000) AS at
FROM generate_series(1, 400000) i;
INSERT INTO rounds (id, user_id, game, table_name, status, seed_pair_id, nonce, currency, rules,
  stakes, staked, actions, cards, outcome, payout, net, receipt, receipt_signature, created_at,
  settled_at, settled_on, ante, tie_bet, tie_result)
SELECT r.id, 1000 + r.n, t.game, t.table_name, 'settled', 1000000 + r.n, r.i, t.currency, t.rules,
  t.stakes, t.staked, t.actions, t.cards, t.outcome, t.payout, t.net, t.receipt,
  t.receipt_signature, r.at, r.at, (r.at AT TIME ZONE 'UTC')::date, t.ante, t.tie_bet, t.tie_result
FROM r, (SELECT * FROM rounds WHERE id = 1) t;
-- transfers: bet 2000000 + 2i, settle 2000000 + 2i + 1
INSERT INTO transfers (id, kind, currency, user_id, round_id, created_at)
SELECT 2000000 + 2*r.i + k, CASE k WHEN 0 THEN 'bet' ELSE 'settle' END, 'chips', 1000 + r.n, r.id, r.at
FROM r, generate_series(0, 1) k;
-- postings 5 a round
INSERT INTO postings (id, transfer_id, account_id, amount)
SELECT 3000000 + 5*r.i + p.k,
       2000000 + 2*r.i + p.t,
       1000000 + 4*r.n + p.acct, p.amount
FROM r, (VALUES (0, 0, 0, -500), (1, 0, 2, 500), (2, 1, 2, -500), (3, 1, 0, 1000), (4, 1, 3, -500))
  AS p(k, t, acct, amount);
-- each account's balance is what its postings sum to, as the ledger check compares them (the
-- rounds' rows still disagree with their postings: the player's stake comes back)
UPDATE accounts a SET balance = s.total
FROM (SELECT account_id, sum(amount) AS total FROM postings GROUP BY account_id) s
WHERE a.id = s.account_id AND a.balance <> s.total;
SELECT setval('users_id_seq', 200000), setval('accounts_id_seq', 2000000),
  setval('seed_pairs_id_seq', 2000000), setval('rounds_id_seq', 2000000),
  setval('transfers_id_seq', 3000000), setval('postings_id_seq', 6000000);
ANALYZE;
