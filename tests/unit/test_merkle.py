"""The RFC 6962 Merkle tree: the published vectors, and every proof of every small tree."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from sota_casino.core import merkle
from sota_casino.core.merkle import MerkleTree

# The test leaves and tree heads of the Certificate Transparency reference implementation
# (the same values certificate-transparency-go and trillian test against).
CT_LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = [
    (0, 1, []),
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
CT_CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]


# A literal transcription of RFC 6962 §2.1, written like the RFC rather than like the module,
# so that the exhaustive tests compare two independent statements of the same definitions.
def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(d: list[bytes]) -> bytes:
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = _k(len(d))
    return hashlib.sha256(b"\x01" + _mth(d[:k]) + _mth(d[k:])).digest()


def _path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = _k(len(d))
    if m < k:
        return _path(m, d[:k]) + [_mth(d[k:])]
    return _path(m - k, d[k:]) + [_mth(d[:k])]


def _subproof(m: int, d: list[bytes], complete: bool) -> list[bytes]:
    if m == len(d):
        return [] if complete else [_mth(d)]
    k = _k(len(d))
    if m <= k:
        return _subproof(m, d[:k], complete) + [_mth(d[k:])]
    return _subproof(m - k, d[k:], False) + [_mth(d[:k])]


def _data(n: int) -> list[bytes]:
    """Leaves shaped like the audit log's: 32-byte entry hashes."""
    return [hashlib.sha256(f"entry {i}".encode()).digest() for i in range(n)]


def _flip(node: bytes) -> bytes:
    return bytes([node[0] ^ 1]) + node[1:]


@pytest.mark.parametrize("n", range(9))
def test_root_of_the_ct_leaves_is_the_published_tree_head(n: int) -> None:
    assert merkle.root(CT_LEAVES[:n]).hex() == CT_ROOTS[n]
    assert MerkleTree(CT_LEAVES).root(n).hex() == CT_ROOTS[n]


def test_empty_tree_root_is_sha256_of_nothing_and_leaves_and_nodes_are_domain_separated() -> None:
    assert merkle.root([]) == hashlib.sha256(b"").digest() == merkle.empty_root()
    assert merkle.leaf_hash(b"abc") == hashlib.sha256(b"\x00abc").digest()
    left, right = merkle.leaf_hash(b"a"), merkle.leaf_hash(b"b")
    assert merkle.node_hash(left, right) == hashlib.sha256(b"\x01" + left + right).digest()
    assert merkle.leaf_hash(left + right) != merkle.node_hash(left, right)


@pytest.mark.parametrize(("index", "size", "expected"), CT_INCLUSION)
def test_inclusion_proof_is_the_published_audit_path(
    index: int, size: int, expected: list[str]
) -> None:
    proof = merkle.inclusion_proof(index, CT_LEAVES[:size])
    assert [node.hex() for node in proof] == expected
    root = bytes.fromhex(CT_ROOTS[size])
    assert merkle.verify_inclusion(index, size, CT_LEAVES[index], proof, root)


@pytest.mark.parametrize(("old", "new", "expected"), CT_CONSISTENCY)
def test_consistency_proof_is_the_published_proof(old: int, new: int, expected: list[str]) -> None:
    proof = merkle.consistency_proof(old, CT_LEAVES[:new])
    assert [node.hex() for node in proof] == expected
    old_root, new_root = bytes.fromhex(CT_ROOTS[old]), bytes.fromhex(CT_ROOTS[new])
    assert merkle.verify_consistency(old, new, old_root, new_root, proof)


def test_split_point_is_the_largest_power_of_two_below_n() -> None:
    for n in range(2, 1100):
        assert merkle.split_point(n) == _k(n)
    with pytest.raises(ValueError):
        merkle.split_point(1)


@pytest.mark.parametrize("n", range(1, 41))
def test_every_inclusion_proof_of_a_tree_matches_the_rfc_and_only_it_verifies(n: int) -> None:
    data = _data(n)
    tree = MerkleTree(data)
    root = tree.root()
    assert root == _mth(data)
    for index in range(n):
        proof = tree.inclusion_proof(index)
        assert proof == _path(index, data)
        assert merkle.verify_inclusion(index, n, data[index], proof, root)
        assert merkle.verify_inclusion(index, n, tree.leaf(index), proof, root, prehashed=True)
        assert not merkle.verify_inclusion(index, n, data[(index + 1) % n] + b"x", proof, root)
        assert not merkle.verify_inclusion(index, n, data[index], proof, _flip(root))
        assert not merkle.verify_inclusion(index, n, data[index], [*proof, root], root)
        assert not merkle.verify_inclusion(n, n, data[index], proof, root)
        if proof:
            assert not merkle.verify_inclusion(index, n, data[index], proof[:-1], root)
            assert not merkle.verify_inclusion(
                index, n, data[index], [_flip(proof[0]), *proof[1:]], root
            )
            other = index ^ 1 if index ^ 1 < n else (index + 1) % n
            assert not merkle.verify_inclusion(other, n, data[index], proof, root)


@pytest.mark.parametrize("n", range(1, 41))
def test_every_consistency_proof_of_a_tree_matches_the_rfc_and_only_it_verifies(n: int) -> None:
    data = _data(n)
    tree = MerkleTree(data)
    new_root = tree.root()
    for old in range(0, n + 1):
        proof = tree.consistency_proof(old)
        assert proof == ([] if old == 0 else _subproof(old, data, True))
        assert proof == merkle.consistency_proof(old, data)
        old_root = tree.root(old)
        assert old_root == _mth(data[:old])
        assert merkle.verify_consistency(old, n, old_root, new_root, proof)
        assert not merkle.verify_consistency(old, n, _flip(old_root), new_root, proof)
        if old:  # the empty tree is a prefix of every tree, whatever its root
            assert not merkle.verify_consistency(old, n, old_root, _flip(new_root), proof)
        if proof:
            assert not merkle.verify_consistency(old, n, old_root, new_root, proof[:-1])
            assert not merkle.verify_consistency(old, n, old_root, new_root, [*proof, new_root])
            for i in range(len(proof)):
                bad = [*proof[:i], _flip(proof[i]), *proof[i + 1 :]]
                assert not merkle.verify_consistency(old, n, old_root, new_root, bad)
        if 0 < old < n:
            # The old tree of another log is not a prefix of this one.
            foreign = MerkleTree([_flip(d) for d in data[:old]]).root()
            assert not merkle.verify_consistency(old, n, foreign, new_root, proof)


def test_a_log_that_shrank_or_a_same_size_tree_with_another_root_is_not_consistent() -> None:
    tree = MerkleTree(_data(8))
    assert not merkle.verify_consistency(8, 6, tree.root(8), tree.root(6), [])
    assert not merkle.verify_consistency(6, 6, tree.root(6), tree.root(5), [])
    assert merkle.verify_consistency(6, 6, tree.root(6), tree.root(6), [])
    assert not merkle.verify_consistency(6, 6, tree.root(6), tree.root(6), [tree.root(6)])
    assert not merkle.verify_consistency(0, 8, tree.root(3), tree.root(), [])
    assert not merkle.verify_consistency(4, 8, tree.root(4), tree.root(), [])


def test_malformed_proofs_are_refused_without_an_exception() -> None:
    data = _data(5)
    tree = MerkleTree(data)
    assert not merkle.verify_inclusion(1, 5, data[1], [b"short"], tree.root())
    assert not merkle.verify_inclusion(-1, 5, data[1], tree.inclusion_proof(1), tree.root())
    assert not merkle.verify_consistency(2, 5, tree.root(2), tree.root(), [b"x" * 31])
    assert not merkle.verify_consistency(-1, 5, tree.root(2), tree.root(), [])


def test_proof_builders_refuse_impossible_sizes() -> None:
    tree = MerkleTree(_data(4))
    with pytest.raises(ValueError):
        tree.inclusion_proof(4)
    with pytest.raises(ValueError):
        tree.consistency_proof(5)
    with pytest.raises(ValueError):
        tree.root(5)


# --- the frontier: the next root from the last one's subtree roots -------------------------


def test_the_frontier_gives_the_published_roots() -> None:
    for size, expected in enumerate(CT_ROOTS):
        assert merkle.Frontier.of(CT_LEAVES[:size]).root().hex() == expected


@pytest.mark.parametrize("size", range(0, 40))
def test_a_frontier_extended_in_any_two_steps_is_the_tree_of_all_leaves(size: int) -> None:
    leaves = [hashlib.sha256(b"leaf %d" % i).digest() for i in range(size)]
    whole = merkle.Frontier.of(leaves)
    assert whole.root() == merkle.root(leaves)
    assert len(whole.roots) == bin(size).count("1")  # one perfect subtree per set bit
    for cut in range(size + 1):
        assert merkle.Frontier.of(leaves[:cut]).extended(leaves[cut:]) == whole


def test_a_stored_frontier_reads_back_and_a_wrong_one_is_refused() -> None:
    frontier = merkle.Frontier.of(CT_LEAVES[:7])
    assert merkle.Frontier.from_hex(7, frontier.to_hex()) == frontier
    for size in (6, 8, -1):  # 7 leaves hold three subtrees (4, 2, 1); 6 and 8 do not
        with pytest.raises(ValueError):
            merkle.Frontier.from_hex(size, frontier.to_hex())


def _stored(data: list[bytes], min_height: int, covered: int) -> tuple[merkle.StoredTree, list]:
    """A tree read from 'storage': the nodes over the first ``covered`` leaves, and the leaves."""
    _, nodes = merkle.Frontier(0, ()).extended_collecting(data[:covered], min_height)
    store = {(node.height, node.index): node.hash for node in nodes}
    lookups: list[int] = []

    def found(wanted: Any) -> dict[tuple[int, int], bytes]:
        lookups.append(len(wanted))
        return {key: store[key] for key in wanted if key in store}

    return merkle.StoredTree(min_height, found, lambda start, end: data[start:end]), lookups


@pytest.mark.parametrize("min_height", [1, 2, 3])
def test_proofs_from_stored_nodes_are_the_published_ones(min_height: int) -> None:
    for covered in (0, 4, 8):
        tree, _ = _stored(CT_LEAVES, min_height, covered)
        for index, size, expected in CT_INCLUSION:
            assert tree.roots(merkle.inclusion_ranges(index, size)) == [
                bytes.fromhex(h) for h in expected
            ]
        for old, new, expected in CT_CONSISTENCY:
            assert tree.roots(merkle.consistency_ranges(old, new)) == [
                bytes.fromhex(h) for h in expected
            ]
        for n in range(9):
            assert tree.roots([(0, n)]) == [bytes.fromhex(CT_ROOTS[n])]


@pytest.mark.parametrize("n", [1, 2, 3, 63, 64, 65, 127, 200, 1000])
def test_proofs_from_stored_nodes_match_the_whole_tree_with_any_part_stored(n: int) -> None:
    data = _data(n)
    whole = MerkleTree(data)
    for min_height in (2, 4):
        for covered in (0, n // 2, n):
            tree, _ = _stored(data, min_height, covered)
            for index in {0, n // 3, n - 1}:
                assert tree.roots(merkle.inclusion_ranges(index, n)) == whole.inclusion_proof(index)
            for old in {1, n // 2, n}:
                if old:
                    assert tree.roots(merkle.consistency_ranges(old, n)) == (
                        whole.consistency_proof(old, n)
                    )


def test_a_proof_from_a_fully_stored_tree_reads_a_few_nodes_and_one_block_of_leaves() -> None:
    data = _data(5000)
    _, nodes = merkle.Frontier(0, ()).extended_collecting(data, 4)
    store = {(node.height, node.index): node.hash for node in nodes}
    read: list[tuple[int, int]] = []

    def leaves(start: int, end: int) -> list[bytes]:
        read.append((start, end))
        return data[start:end]

    tree = merkle.StoredTree(4, lambda wanted: {k: store[k] for k in wanted if k in store}, leaves)
    proof = tree.roots(merkle.inclusion_ranges(1234, 4096))
    assert proof == MerkleTree(data).inclusion_proof(1234, 4096)
    assert read == [(1232, 1248)]  # the leaf's own block of 16, nothing else


def test_collected_nodes_are_the_roots_of_their_perfect_subtrees() -> None:
    data = _data(100)
    whole = MerkleTree(data)
    _, nodes = merkle.Frontier.of(data[:37]).extended_collecting(data[37:], 2)
    assert {(node.height, node.index) for node in nodes} == {
        (h, i) for h in range(2, 7) for i in range(100 >> h) if (i + 1) << h > 37
    }
    for node in nodes:
        start = node.index << node.height
        assert node.hash == whole.subtree_root(start, start + (1 << node.height))
