"""The RFC 6962 Merkle tree of the audit log: roots, inclusion and consistency proofs.

A leaf is ``sha256(0x00 ‖ data)``, an interior node ``sha256(0x01 ‖ left ‖ right)``, and a tree
of ``n > 1`` leaves splits at the largest power of two smaller than ``n`` (RFC 6962 §2.1; the
root of the empty tree is ``sha256(b"")``). Proofs are built as RFC 6962 §2.1.1–2.1.2 define
them and verified with the algorithms of RFC 9162 §2.1.3.2 and §2.1.4.2.

Every function takes the leaves' *data* (for the audit log: the 32 raw bytes of each entry's
hash) and hashes them as leaves itself; only :func:`verify_inclusion` can be handed a leaf hash
instead, with ``prehashed=True``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final
from typing import NamedTuple

LEAF_PREFIX: Final = b"\x00"
NODE_PREFIX: Final = b"\x01"
HASH_SIZE: Final = 32


def leaf_hash(data: bytes) -> bytes:
    """Return the hash of a leaf holding ``data``: ``sha256(0x00 ‖ data)``."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Return the hash of an interior node: ``sha256(0x01 ‖ left ‖ right)``."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def empty_root() -> bytes:
    """Return the root of the empty tree: ``sha256(b"")``."""
    return hashlib.sha256(b"").digest()


def split_point(n: int) -> int:
    """Return the largest power of two smaller than ``n`` (RFC 6962's ``k``), for ``n >= 2``."""
    if n < 2:
        raise ValueError(f"a tree of {n} leaves does not split")
    return 1 << ((n - 1).bit_length() - 1)


class MerkleTree:
    """The tree over a list of leaves, with every perfect subtree hashed once.

    Each subtree the RFC recursion visits starts at a multiple of a power of two, so the
    perfect ones are looked up in ``levels`` and only the O(log n) ragged ones on the right
    edge are hashed again (and remembered). That makes a root, an inclusion proof or a
    consistency proof for any earlier size cost O(log n) once the tree is built in O(n).
    """

    __slots__ = ("_levels", "_ragged")

    def __init__(self, leaves: Sequence[bytes]) -> None:
        level = [leaf_hash(data) for data in leaves]
        self._levels: list[list[bytes]] = [level]
        while len(level) > 1:
            level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            self._levels.append(level)
        self._ragged: dict[tuple[int, int], bytes] = {}

    @property
    def size(self) -> int:
        """How many leaves the tree holds."""
        return len(self._levels[0])

    def leaf(self, index: int) -> bytes:
        """Return the hash of leaf ``index``."""
        return self._levels[0][index]

    def _check_size(self, size: int | None) -> int:
        if size is None:
            return self.size
        if not 0 <= size <= self.size:
            raise ValueError(f"tree size {size} is outside 0..{self.size}")
        return size

    def _subtree(self, start: int, end: int) -> bytes:
        """Return ``MTH(D[start:end])`` for a non-empty range that the recursion can visit."""
        width = end - start
        height = width.bit_length() - 1
        if width == 1 << height and start % width == 0:
            return self._levels[height][start >> height]
        cached = self._ragged.get((start, end))
        if cached is None:
            k = split_point(width)
            cached = node_hash(self._subtree(start, start + k), self._subtree(start + k, end))
            self._ragged[(start, end)] = cached
        return cached

    def root(self, size: int | None = None) -> bytes:
        """Return the root of the first ``size`` leaves (all by default)."""
        size = self._check_size(size)
        return self._subtree(0, size) if size else empty_root()

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """Return the audit path ``PATH(index, D[0:size])`` of RFC 6962 §2.1.1.

        :raises ValueError: if ``index`` is not a leaf of the tree of that size.
        """
        size = self._check_size(size)
        if not 0 <= index < size:
            raise ValueError(f"leaf {index} is not in a tree of size {size}")
        return [self._subtree(start, end) for start, end in inclusion_ranges(index, size)]

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """Return ``PROOF(old_size, D[0:new_size])`` of RFC 6962 §2.1.2.

        The proof is empty when either size is 0 or both are equal: nothing needs proving.

        :raises ValueError: if ``old_size`` exceeds ``new_size``.
        """
        new_size = self._check_size(new_size)
        if not 0 <= old_size <= new_size:
            raise ValueError(f"old size {old_size} is outside 0..{new_size}")
        return [self._subtree(start, end) for start, end in consistency_ranges(old_size, new_size)]

    def subtree_root(self, start: int, end: int) -> bytes:
        """Return ``MTH(D[start:end])`` for a perfect, aligned subtree or one the proofs visit."""
        return self._subtree(start, end)


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """Return the leaf ranges ``[start, end)`` whose roots make ``PATH(index, D[0:size])``.

    RFC 6962 §2.1.1 unrolled; the ranges come leaf side first, as the proof lists its hashes.
    """
    ranges: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = split_point(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    ranges.reverse()
    return ranges


def consistency_ranges(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """Return the leaf ranges whose roots make ``PROOF(old_size, D[0:new_size])`` (§2.1.2).

    None when either size is 0 or both are equal: nothing needs proving.
    """
    if old_size in (0, new_size):
        return []
    ranges: list[tuple[int, int]] = []
    start, end, m, complete = 0, new_size, old_size, True
    # SUBPROOF(m, D[start:end], complete), unrolled; its ranges come out root side first.
    while m != end - start:
        k = split_point(end - start)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start, m, complete = start + k, m - k, False
    if not complete:
        ranges.append((start, end))
    ranges.reverse()
    return ranges


def perfect_pieces(start: int, end: int) -> list[tuple[int, int]]:
    """Split ``[start, end)`` into the perfect subtrees of its tree, largest first.

    Each piece is ``(height, index)``: the ``2**height`` leaves from ``index << height``. For
    a range that starts on a multiple of a power of two at least its width (every range the
    proofs visit, and every prefix ``[0, n)``) the tree's root is :func:`fold_pieces` of them,
    since RFC 6962 splits off the largest power of two first.
    """
    pieces: list[tuple[int, int]] = []
    position, width = start, end - start
    for height in range(width.bit_length() - 1, -1, -1):
        if width >> height & 1:
            pieces.append((height, position >> height))
            position += 1 << height
    return pieces


def fold_pieces(roots: Sequence[bytes]) -> bytes:
    """Return the root of a tree given its perfect subtrees' roots, largest first."""
    if not roots:
        return empty_root()
    node = roots[-1]
    for left in reversed(roots[:-1]):
        node = node_hash(left, node)
    return node


class Node(NamedTuple):
    """The root of a perfect subtree: the ``2**height`` leaves from ``index << height``."""

    height: int
    index: int  # type: ignore[assignment]  # shadows tuple.index, which nodes never use
    hash: bytes


class Frontier(NamedTuple):
    """The tree of the first ``size`` leaves held as the roots of its perfect subtrees.

    A tree of ``size`` leaves is a run of perfect subtrees, one per set bit of ``size``, largest
    first (RFC 6962 splits at powers of two); their roots are all that appending leaves or
    taking the root needs. So the log's next root costs O(new leaves + log n), not O(n).
    """

    size: int
    roots: tuple[bytes, ...]

    @classmethod
    def of(cls, leaves: Iterable[bytes]) -> Frontier:
        """Return the frontier of the tree of ``leaves`` (their data)."""
        return cls(0, ()).extended(leaves)

    def extended(self, leaves: Iterable[bytes]) -> Frontier:
        """Return the frontier after appending ``leaves`` (their data)."""
        return self.extended_collecting(leaves, min_height=None)[0]

    def extended_collecting(
        self, leaves: Iterable[bytes], min_height: int | None
    ) -> tuple[Frontier, list[Node]]:
        """Append ``leaves`` (their data) and also return every perfect subtree they complete
        of at least ``min_height`` (none for ``None``), in the order they complete."""
        size, roots = self.size, list(self.roots)
        completed: list[Node] = []
        for data in leaves:
            node, carry, height = leaf_hash(data), size, 0
            while carry & 1:  # merge equal perfect subtrees, as a binary counter carries
                node = node_hash(roots.pop(), node)
                carry >>= 1
                height += 1
                if min_height is not None and height >= min_height:
                    completed.append(Node(height, size >> height, node))
            roots.append(node)
            size += 1
        return Frontier(size, tuple(roots)), completed

    def root(self) -> bytes:
        """Return the Merkle tree hash of the leaves so far."""
        return fold_pieces(self.roots)

    def to_hex(self) -> str:
        """Return the subtree roots as one hex string (to store beside a checkpoint)."""
        return b"".join(self.roots).hex()

    @classmethod
    def from_hex(cls, size: int, text: str) -> Frontier:
        """Read a frontier stored with :meth:`to_hex`.

        :raises ValueError: if ``text`` does not hold one root per set bit of ``size``.
        """
        raw = bytes.fromhex(text)
        if size < 0 or len(raw) != HASH_SIZE * bin(size).count("1"):
            raise ValueError(f"not the frontier of a tree of {size} leaves")
        return cls(size, tuple(raw[i : i + HASH_SIZE] for i in range(0, len(raw), HASH_SIZE)))


class StoredTree:
    """A tree read from storage: stored perfect subtrees of ``min_height`` and up, and leaves.

    A proof or a root needs the roots of O(log n) ranges; each is a fold of perfect pieces
    (:func:`perfect_pieces`). Pieces of ``min_height`` and up are looked up with ``nodes``;
    a missing one (not stored yet) is made from its two halves, down to ``min_height``, whose
    leaves are read. Pieces below ``min_height`` are hashed from the aligned block of
    ``2**min_height`` leaves around them, read once with ``leaves``. So a proof costs a few
    look-ups of O(log n) nodes and of a block or two of leaves, whatever the tree's size,
    plus the leaves not yet covered by stored nodes.

    :param nodes: given ``(height, index)`` pairs, return the stored roots among them.
    :param leaves: return the leaf data of ``[start, end)`` (all of them).
    """

    def __init__(
        self,
        min_height: int,
        nodes: Callable[[Collection[tuple[int, int]]], Mapping[tuple[int, int], bytes]],
        leaves: Callable[[int, int], Sequence[bytes]],
    ) -> None:
        self._min_height = min_height
        self._nodes = nodes
        self._leaves = leaves
        self._known: dict[tuple[int, int], bytes] = {}

    def roots(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """Return ``MTH(D[start:end])`` for each range (ranges a proof visits, or prefixes)."""
        pieces = [perfect_pieces(start, end) for start, end in ranges]
        self._load({piece for group in pieces for piece in group})
        return [fold_pieces([self._known[piece] for piece in group]) for group in pieces]

    def _load(self, wanted: set[tuple[int, int]]) -> None:
        low = {piece for piece in wanted if piece[0] < self._min_height}
        high = wanted - low
        to_combine: list[set[tuple[int, int]]] = []  # nodes not stored, one set per round
        while high:
            found = self._nodes(high)
            self._known.update(found)
            missing = high - found.keys()
            bottom = {piece for piece in missing if piece[0] == self._min_height}
            low |= bottom
            above = missing - bottom
            to_combine.append(above)
            high = {
                (height - 1, index * 2 + side) for height, index in above for side in (0, 1)
            } - self._known.keys()
        self._hash_low(low)
        # Each round's children were found, hashed or combined in a later round; lower first.
        for level in reversed(to_combine):
            for height, index in sorted(level):
                self._known[(height, index)] = node_hash(
                    self._known[(height - 1, index * 2)], self._known[(height - 1, index * 2 + 1)]
                )

    def _hash_low(self, pieces: set[tuple[int, int]]) -> None:
        """Hash pieces below (or at) ``min_height`` from their aligned blocks of leaves."""
        block_height = self._min_height
        ends: dict[int, int] = {}  # block number -> the end of the leaves it needs
        for height, index in pieces:
            start = index << height
            block = start >> block_height
            ends[block] = max(ends.get(block, 0), start + (1 << height))
        for block, end in ends.items():
            first = block << block_height
            tree = MerkleTree(self._leaves(first, end))
            for height, index in pieces:
                start = index << height
                if start >> block_height == block:
                    root = tree.subtree_root(start - first, start - first + (1 << height))
                    self._known[(height, index)] = root


def root(leaves: Sequence[bytes]) -> bytes:
    """Return the Merkle tree hash of ``leaves`` (their data; ``sha256(b"")`` when empty)."""
    return MerkleTree(leaves).root()


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """Return the inclusion proof of leaf ``index`` in the tree of all ``leaves``."""
    return MerkleTree(leaves).inclusion_proof(index)


def consistency_proof(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """Return the proof that the tree of the first ``old_size`` leaves is a prefix of all."""
    return MerkleTree(leaves).consistency_proof(old_size)


def _is_hash(value: object) -> bool:
    return isinstance(value, bytes) and len(value) == HASH_SIZE


def verify_inclusion(
    index: int,
    size: int,
    leaf: bytes,
    proof: Sequence[bytes],
    root_hash: bytes,
    *,
    prehashed: bool = False,
) -> bool:
    """Tell whether ``proof`` shows leaf ``index`` of a tree of ``size`` leaves under ``root_hash``.

    RFC 9162 §2.1.3.2. Malformed input is a ``False``, never an exception.

    :param leaf: the leaf's data (an audit entry's 32-byte hash), or its leaf hash if
        ``prehashed``.
    """
    if not 0 <= index < size or not all(_is_hash(node) for node in proof):
        return False
    fn, sn = index, size - 1
    r = leaf if prehashed else leaf_hash(leaf)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root_hash


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Tell whether ``proof`` shows the tree ``(old_size, old_root)`` is a prefix of the new one.

    RFC 9162 §2.1.4.2, plus the trivial cases: equal sizes need equal roots and an empty proof;
    an empty old tree is a prefix of anything (its root must be ``sha256(b"")``). A shrinking
    tree, or malformed input, is a ``False``, never an exception.
    """
    if not 0 <= old_size <= new_size or not all(_is_hash(node) for node in proof):
        return False
    if old_size == 0:
        return old_root == empty_root() and not proof
    if old_size == new_size:
        return old_root == new_root and not proof
    if not proof:
        return False
    nodes = list(proof)
    # When old_size is a power of two the old root is itself the first node of the path.
    if old_size & (old_size - 1) == 0:
        nodes.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = nodes[0]
    for c in nodes[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
