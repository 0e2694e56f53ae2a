"""A witness of the casino's audit log: ``verify monitor URL --state DIR``.

Each run fetches the latest signed checkpoint (``GET /api/v1/transparency/checkpoint``), checks
its signature against the pinned key, and checks that it extends the checkpoint kept in ``DIR``
from the last run: the same root at the same size, or an RFC 6962 consistency proof
(``GET /api/v1/transparency/consistency``) from the kept tree to the new one. Only then is the
new checkpoint kept. A cron job acts on the exit code and the one line printed:

* 0 ``OK``: consistent (or the first checkpoint, now kept);
* 1 ``FORK``, ``SHRUNK`` or ``BACKDATED``: the log contradicts a checkpoint the service signed
  (``BACKDATED``: a checkpoint over more entries dated before one over fewer, which would keep a
  round it left out "not yet anchored"); the line names both sizes and roots, and both signed
  checkpoints are written to ``DIR/evidence-*.json``, which is what a witness publishes. Also 1,
  ``BAD SIGNATURE``: the served checkpoint is not signed by the pinned key (nor by a key its
  changes lead to); unsigned, it proves nothing to anyone else, so no evidence is written;
* 2 ``UNUSABLE``: the service cannot be reached, or answers something that is not a checkpoint,
  or the state or key cannot be used. Nothing is concluded, and nothing kept changes. Also 2,
  ``UNPROVEN``: a checkpoint was shown whose consistency proof the service withheld; it is kept
  in ``DIR/unproven.json`` and asked for again on every run (a fork hidden so, the true log
  shown again on the next run, would otherwise leave no trace), until a proof joins it or the
  service contradicts it (``FORK``).

A checkpoint over more entries than the kept one is ``BACKDATED`` also when it is dated more than
:data:`SERVED_SLACK` before a time the service's clock had reached when this witness was last
served the kept one as the latest (``DIR/served.json``, :func:`..core.anchors.served_again`):
signed by then, it was withheld, or it is dated back. Only time passed on this computer's clock
counts, never what it reads, so a clock set fast or slow raises no false alarm.

A checkpoint signed by another key than the pinned one is checked only through the service's key
changes (``GET /api/v1/fairness/public-key``): a chain of them from the pinned key, each signed
by the key it retires, to the key that signed the checkpoint (or to a key after it) moves the
pin to the key in use (the keys it retired are kept in ``DIR/retired_keys``, each with the time
this witness followed the change: a process not yet restarted still signs with one, so a
checkpoint a retired key signs is checked as the pinned key's for :data:`RETIRED_KEY_GRACE`
after that time, never later: a retired key, kept in a file, perhaps leaked, would otherwise
sign checkpoints for good, which its holder can disown).
Without that chain it is ``BAD SIGNATURE``, naming any change that is never followed: to a weak
key (:func:`..core.fairness.weak_key_problem`), or dated otherwise than the scheme's time form.
The checkpoint is held to the kept one either way: a key change starts no new history.

``--compare FILE`` (any number) checks the signed checkpoints other witnesses published, or those
a bundle's anchors are proved into, against the one kept, as the served one is checked: a split
view shows each witness a history of its own, which only such a comparison finds. A checkpoint
of such a file that no key of this witness signed is left out, said, and hides none beside it.
One whose consistency proof the service withholds is kept in ``DIR/unproven.json`` as a served
one is (``UNPROVEN``), and asked for again on every run, the file given again or not.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any
from typing import Final
from typing import Literal

from ..core import merkle
from ..core.anchors import SERVED_SLACK as SERVED_SLACK
from ..core.anchors import SERVED_SLACK_TEXT as SERVED_SLACK_TEXT
from ..core.anchors import Served
from ..core.anchors import served_again
from ..core.anchors import served_backdated
from ..core.anchors import served_of
from ..core.audit_chain import checkpoint_shape_problem
from ..core.audit_chain import open_checkpoint_note
from ..core.fairness import WrittenOtherwise
from ..core.fairness import format_time
from ..core.fairness import is_hex64
from ..core.fairness import parse_time
from ..core.fairness import time_or_none
from ..core.fairness import verify_signature
from ..core.fairness import whole_number_json
from .report import EXIT_FAILED
from .report import EXIT_OK
from .report import EXIT_UNUSABLE
from .report import short
from .trust import KeyProblem
from .trust import refuse_weak_key
from .trust import refused_key_changes
from .trust import successor_chain

CHECKPOINT_PATH: Final = "/api/v1/transparency/checkpoint"
CONSISTENCY_PATH: Final = "/api/v1/transparency/consistency"
PUBLIC_KEY_PATH: Final = "/api/v1/fairness/public-key"
STATE_FILE: Final = "checkpoint.json"
KEY_FILE: Final = "public_key"
RETIRED_FILE: Final = "retired_keys"
#: The checkpoints this witness was shown whose consistency proof the service withheld.
UNPROVEN_FILE: Final = "unproven.json"
#: When this witness was last served the kept checkpoint as the latest (its own clock), and a
#: time the service's clock had reached by then (:class:`..core.anchors.Served`).
SERVED_FILE: Final = "served.json"
#: What an earlier version kept instead: the moment alone, by this witness's clock, which held a
#: witness whose clock runs fast to the wrong time; it is no longer read.
OLD_SERVED_FILE: Final = "served_at"
#: How long after this witness followed a key change a checkpoint the retired key signs is still
#: checked as the pinned key's: a process not yet restarted after ``flask keys rotate`` signs
#: with it until the operator restarts it, which takes minutes, not hours.
RETIRED_KEY_GRACE: Final = timedelta(hours=1)
RETIRED_KEY_GRACE_TEXT: Final = "1 hour"
#: Why a published checkpoint and the kept one are no history the service can prove one.
PUBLISHED_PROBLEMS: Final = {
    "denied": "the service no longer proves one of the two checkpoints it signed",
    "unjoined": "the service's consistency proof does not join two checkpoints it signed",
}
#: The most a checkpoint or a proof is read (a proof of a log of 2**63 entries is under 6 kB).
MAX_ANSWER: Final = 1 << 20


class Unusable(Exception):
    """Nothing can be concluded: say why (exit 2)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    code: int
    line: str


def _get(url: str, timeout: float) -> tuple[int, Any]:
    """Return the HTTP status and the JSON of ``url``.

    :raises Unusable: if it cannot be reached or does not answer JSON.
    """
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 (the user's URL)
            status, body = answer.status, answer.read(MAX_ANSWER + 1)
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read(MAX_ANSWER + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise Unusable(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    if len(body) > MAX_ANSWER:
        raise Unusable(f"{url} answered more than {MAX_ANSWER} bytes")
    try:
        return status, whole_number_json(body.decode("utf-8"))
    except WrittenOtherwise as exc:
        raise Unusable(f"{url} answered {status}: {exc}") from None
    except (ValueError, RecursionError):  # UnicodeDecodeError too
        raise Unusable(f"{url} answered {status} with something that is not JSON") from None


def _base(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Unusable(f"{url!r} is not an http(s) URL of the service")
    return url.rstrip("/").removesuffix(CHECKPOINT_PATH)


def _described(doc: Mapping[str, Any]) -> str:
    return f"size {doc['size']} root {doc['root']}"


def _dated(doc: Mapping[str, Any]) -> str:
    return f"{_described(doc)} at {doc['time']}"


def backdated(smaller: Mapping[str, Any], larger: Mapping[str, Any]) -> bool:
    """Whether of two signed checkpoint documents, ``larger`` (over at least as many entries)
    is dated before ``smaller``, or the two are one tree (size and root) dated apart: the
    service signs a checkpoint over the whole log as it is then, once per size, so a later
    checkpoint is never older (two roots at one size are a fork, said as one). A casino that
    dated its new checkpoints back could keep every checkpoint before the bound of a round it
    left out of its log (docs/fairness.md)."""
    earlier, later = parse_time(smaller["time"]), parse_time(larger["time"])
    if smaller["size"] == larger["size"]:
        return smaller["root"] == larger["root"] and later != earlier
    return later < earlier


def _checkpoint_of(answer: object, keys: tuple[str, ...], url: str) -> dict[str, Any]:
    """The signed checkpoint of an answer, checked: signed by one of ``keys``.

    :raises Unusable: if it is not one.
    :raises _BadSignature: if the pinned key did not sign it.
    """
    if not isinstance(answer, dict):
        raise Unusable(f"{url} did not answer a JSON object")
    signed = answer.get("checkpoint")
    problem = checkpoint_shape_problem(signed)
    if problem is not None:
        raise Unusable(f"{url} did not answer a signed checkpoint: it {problem}")
    assert isinstance(signed, dict)  # checkpoint_shape_problem found it an object
    doc = signed["document"]
    key = next((k for k in keys if verify_signature(k, doc, signed["signature"])), None)
    if key is None:
        raise _BadSignature(doc)
    note, origin = answer.get("note"), answer.get("origin")
    if isinstance(note, str) and isinstance(origin, str):
        try:
            opened = open_checkpoint_note(note, key, origin)
        except ValueError:
            raise _BadSignature(doc, "its signed note does not verify with it") from None
        if opened[1:] != (doc["size"], doc["root"]):
            raise _BadSignature(doc, "its signed note names another size or root")
    return {"document": dict(doc), "signature": signed["signature"]}


class _BadSignature(Exception):
    """``doc`` is not signed by the pinned key; ``why`` says more where there is more to say."""

    def __init__(self, doc: Mapping[str, Any], why: str = "") -> None:
        super().__init__(why)
        self.doc, self.why = doc, why


def _refuse_past_grace(
    answer: Any, retired: tuple[Retired, ...], now: datetime, bad: _BadSignature
) -> None:
    """Say so if a retired key past its grace signed the served checkpoint: its holder (a file
    the operator keeps, perhaps leaked) is no process not yet restarted any more.

    :raises _BadSignature: if one did.
    """
    signed = answer["checkpoint"]  # _checkpoint_of found it a signed checkpoint
    for one in retired:
        if not one.signs_at(now) and verify_signature(one.key, bad.doc, signed["signature"]):
            when = (
                f"at {format_time(one.followed_at)}"
                if one.followed_at
                else "at a time this state does not keep"
            )
            raise _BadSignature(
                bad.doc,
                f"it is signed by the retired key {one.key}, which a key change this witness "
                f"followed {when} retired: a process not yet restarted signs with it for "
                f"{RETIRED_KEY_GRACE_TEXT} after that, not later",
            ) from None


def _load_state(folder: Path) -> dict[str, Any] | None:
    path = folder / STATE_FILE
    try:
        kept = whole_number_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise Unusable(f"cannot read the kept checkpoint {path}: {exc}") from None
    if checkpoint_shape_problem(kept) is not None:
        raise Unusable(f"{path} does not hold a signed checkpoint")
    return dict(kept)


def _write(path: Path, data: object) -> None:
    """Write JSON atomically: a run stopped halfway leaves the old file whole."""
    fd, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(draft, path)


def _pinned_key(folder: Path, given: str | None, retired: tuple[str, ...]) -> str:
    """The key the checkpoints must be signed by: given once, then kept in ``DIR`` (the key
    first given is still taken once a key change signed by it moved the pin)."""
    path = folder / KEY_FILE
    try:
        kept: str | None = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        kept = None
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc}") from None
    if kept is not None and not is_hex64(kept):
        raise Unusable(f"{path} does not hold a public key (64 lower-case hex digits)")
    if given is not None and kept is not None and given != kept and given not in retired:
        raise Unusable(
            f"the key given ({short(given)}) is not the key this state pins ({short(kept)}); "
            "a witness never changes key silently: use another --state"
        )
    key = kept or given
    if key is None:
        raise Unusable(
            "no key pinned yet: give --public-key HEX or --key-file FILE on the first run"
        )
    try:
        refuse_weak_key(key, str(path) if kept is not None else "--public-key")
    except KeyProblem as exc:
        raise Unusable(str(exc)) from None
    if kept is None:
        path.write_text(key + "\n", encoding="utf-8")
    return key


@dataclass(frozen=True, slots=True)
class Retired:
    """A key the pinned key replaced, and when this witness followed the change that retired it
    (``None``: not known, as an earlier version kept no time; its grace is over)."""

    key: str
    followed_at: datetime | None

    def signs_at(self, now: datetime) -> bool:
        """Whether a checkpoint it signs is still checked: within the grace after the change."""
        return self.followed_at is not None and now <= self.followed_at + RETIRED_KEY_GRACE


def _retired_keys(folder: Path) -> tuple[Retired, ...]:
    """The keys the pinned key replaced, as the chain of key changes this witness followed: a
    line ``KEY FOLLOWED_AT`` each (``KEY`` alone, as an earlier version wrote it)."""
    path = folder / RETIRED_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc}") from None
    retired = []
    for fields in (line.split() for line in lines if line.strip()):
        followed_at = time_or_none(fields[1]) if len(fields) == 2 else None
        if not (is_hex64(fields[0]) and (len(fields) == 1 or followed_at is not None)):
            raise Unusable(
                f"{path} does not hold public keys (64 lower-case hex digits a line, each with "
                "the time the key change was followed)"
            )
        retired.append(Retired(fields[0], followed_at))
    return tuple(retired)


def _key_chain(
    base: str, key: str, timeout: float
) -> tuple[list[Mapping[str, Any]] | None, list[str]]:
    """The key changes leading from ``key`` to the service's key now, each signed by the key it
    retires (a key handed on twice, or by a refused change, leads nowhere), or ``None``: there is
    no such chain; and what the service's refused key changes say (:func:`.refused_key_changes`).
    """
    status, answer = _get(base + PUBLIC_KEY_PATH, timeout)
    if status != 200 or not isinstance(answer, dict):
        return None, []
    refused = refused_key_changes(answer.get("key_changes"))
    now = answer.get("public_key_hex")
    if not (isinstance(now, str) and is_hex64(now)) or now == key:
        return None, refused
    return successor_chain(key, now, answer.get("key_changes")), refused


def _move_pin(
    folder: Path, chain: list[Mapping[str, Any]], retired: tuple[Retired, ...], now: datetime
) -> None:
    olds = [Retired(str(doc["old_public_key_hex"]), now) for doc in chain]
    (folder / RETIRED_FILE).write_text(
        "".join(
            f"{one.key} {format_time(one.followed_at)}\n" if one.followed_at else f"{one.key}\n"
            for one in (*retired, *olds)
        ),
        encoding="utf-8",
    )
    (folder / KEY_FILE).write_text(str(chain[-1]["new_public_key_hex"]) + "\n", encoding="utf-8")


def _evidence(folder: Path, kept: Mapping[str, Any], seen: Mapping[str, Any], why: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"evidence-{stamp}.json"
    _write(path, {"why": why, "kept": kept, "seen": seen})
    return path


def monitor(
    url: str,
    state: str,
    public_key: str | None,
    *,
    timeout: float = 10.0,
    compare: Sequence[str] = (),
    now: datetime | None = None,
) -> Verdict:
    """Run the witness once, then hold the checkpoints of ``compare`` (files other witnesses
    published) to the one kept; never raises for what the service or the state holds.

    :param now: the time to judge a retired key's grace by (default: this computer's clock).
    """
    folder = Path(state).expanduser()
    now = now or datetime.now(UTC)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        base = _base(url)
        retired = _retired_keys(folder)
        key = _pinned_key(folder, public_key, tuple(one.key for one in retired))
        signing = tuple(one.key for one in retired if one.signs_at(now))
        kept = _load_state(folder)
        status, answer = _get(base + CHECKPOINT_PATH, timeout)
        if status != 200:
            raise Unusable(f"{base + CHECKPOINT_PATH} answered {status}")
        chain = None
        try:
            try:
                seen = _checkpoint_of(answer, (key, *signing), base + CHECKPOINT_PATH)
            except _BadSignature as bad:
                _refuse_past_grace(answer, retired, now, bad)
                chain, refused = _key_chain(base, key, timeout)
                if chain is None:
                    why = "; ".join(filter(None, [bad.why, *refused]))
                    raise _BadSignature(bad.doc, why) from None
                # The keys between are retired by this very run: within their grace, as the
                # pinned key is (a process not yet restarted after the last change signs so).
                followed = tuple(str(doc["new_public_key_hex"]) for doc in reversed(chain))
                seen = _checkpoint_of(answer, followed, base + CHECKPOINT_PATH)
        except _BadSignature as bad:
            return Verdict(
                EXIT_FAILED,
                f"BAD SIGNATURE: the checkpoint {_described(bad.doc)} is not signed by the pinned "
                f"key {key}{f' ({bad.why})' if bad.why else ''}, nor by a key a chain of key "
                "changes signed by it leads to; kept: "
                + (_described(kept["document"]) if kept else "nothing yet"),
            )
        contradicted = _against_unproven(folder, seen, "served") or _join_unproven(
            folder, base, kept, timeout
        )
        if contradicted is not None:
            return contradicted
        verdict = _compare(folder, base, kept, seen, timeout, now)
        # A served checkpoint kept unproven (exit 2) still has the published ones compared: a
        # casino withholding every proof must not keep a published fork from being seen.
        if verdict.code == EXIT_FAILED or (verdict.code != EXIT_OK and not compare):
            return verdict
        if chain is not None and verdict.code == EXIT_OK:
            _move_pin(folder, chain, retired, now)
            moved = ", ".join(
                f"{doc['old_public_key_hex']} to {doc['new_public_key_hex']} at "
                f"{doc.get('changed_at')}"
                for doc in chain
            )
            verdict = Verdict(
                verdict.code, f"{verdict.line}; the key changed, signed by the pinned key: {moved}"
            )
        if compare:
            keys = (_pinned_key(folder, None, ()), *(one.key for one in _retired_keys(folder)))
            verdict = _compare_published(folder, base, compare, keys, verdict, timeout, now)
        return _after_unproven(folder, verdict)
    except Unusable as exc:
        return Verdict(EXIT_UNUSABLE, f"UNUSABLE: {exc}")
    except OSError as exc:
        return Verdict(EXIT_UNUSABLE, f"UNUSABLE: cannot use the state folder {folder}: {exc}")


def published_checkpoints(path: str, keys: tuple[str, ...]) -> tuple[list[dict[str, Any]], int]:
    """The signed checkpoints in ``path``: one another witness published (the checkpoint, or an
    answer of the service holding one), or those a bundle's anchors are proved into, each signed
    by one of ``keys``; and how many others it lists (not signed so, or no checkpoint), which
    prove nothing and are not compared, but hide none beside them. The offline check of an
    export reads the checkpoints a witness kept with it too (``audit --checkpoint``).

    :raises Unusable: if it lists none signed by one of ``keys``.
    """
    try:
        held = whole_number_json(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise Unusable(f"cannot read the published checkpoint {path}: {exc}") from None
    listed = held.get("checkpoints") if isinstance(held, dict) else None
    if isinstance(held, dict) and "document" not in held and "checkpoint" in held:
        held = held["checkpoint"]
    found = listed if isinstance(listed, list) and listed else [held]
    checkpoints = [
        {"document": dict(signed["document"]), "signature": signed["signature"]}
        for signed in found
        if checkpoint_shape_problem(signed) is None
        and any(verify_signature(key, signed["document"], signed["signature"]) for key in keys)
    ]
    if not checkpoints:
        if all(checkpoint_shape_problem(signed) is not None for signed in found):
            raise Unusable(f"{path} does not hold a signed checkpoint")
        raise Unusable(f"a checkpoint in {path} is not signed by the pinned key: no evidence")
    return checkpoints, len(found) - len(checkpoints)


def _compare_published(
    folder: Path,
    base: str,
    paths: Sequence[str],
    keys: tuple[str, ...],
    verdict: Verdict,
    timeout: float,
    now: datetime,
) -> Verdict:
    kept = _load_state(folder)
    assert kept is not None  # the run kept one before
    joined, skipped, withheld = [], [], []
    published = []
    for path in paths:
        checkpoints, others = published_checkpoints(path, keys)
        published += [(path, one) for one in checkpoints]
        if others:
            skipped.append(
                f"; also in {path}: {others} checkpoint{'s' if others > 1 else ''} not signed by "
                "a key of this witness (or no checkpoint at all), not compared"
            )
    also = "".join(skipped)
    for path, other in published:
        contradicted = _against_unproven(folder, other, f"published in {path}")
        if contradicted is not None:
            return Verdict(contradicted.code, contradicted.line + also)
        old, new = kept["document"], other["document"]
        both = f"kept {_described(old)}, published in {path} {_described(new)}"
        smaller, larger = sorted((old, new), key=lambda doc: int(doc["size"]))
        if backdated(smaller, larger):
            why = (
                "BACKDATED: of two signed checkpoints, the one over more entries is dated before "
                f"the one over fewer: kept {_dated(old)}, published in {path} {_dated(new)}"
            )
            evidence = _evidence(folder, kept, other, why)
            return Verdict(EXIT_FAILED, f"{why}; evidence in {evidence}{also}")
        if old["size"] == new["size"]:
            if old["root"] != new["root"]:
                why = f"FORK: two signed checkpoints over {old['size']} entries differ: {both}"
                evidence = _evidence(folder, kept, other, why)
                return Verdict(EXIT_FAILED, f"{why}; evidence in {evidence}{also}")
        else:
            try:
                problem = _unproved(base, smaller, larger, timeout)
            except Unusable as exc:
                # Kept as a checkpoint shown with its proof withheld: asked for again every run.
                _remember_unproven(folder, other, str(exc), now, published_in=path)
                withheld.append(path)
                continue
            if problem is not None:
                why = f"FORK: {PUBLISHED_PROBLEMS[problem]}: {both}"
                evidence = _evidence(folder, kept, other, why)
                return Verdict(EXIT_FAILED, f"{why}; evidence in {evidence}{also}")
        joined.append(f"{path} ({_described(new)})")
    line = verdict.line
    if joined:
        line += f"; joined the published {', '.join(joined)}"
    if withheld:
        line += f"; kept unproven the published {', '.join(dict.fromkeys(withheld))}"
    return Verdict(verdict.code, line + also)


def _unproved(
    base: str, smaller: Mapping[str, Any], larger: Mapping[str, Any], timeout: float
) -> Literal["denied", "unjoined"] | None:
    """Whether the service's consistency proof joins two signed checkpoints: ``None`` if it does,
    ``"denied"`` if the service no longer proves the smaller, ``"unjoined"`` if its proof fails.

    :raises Unusable: if it gives no proof.
    """
    query = urllib.parse.urlencode({"old_size": smaller["size"], "new_size": larger["size"]})
    status, proof = _get(f"{base}{CONSISTENCY_PATH}?{query}", timeout)
    nodes = proof.get("proof") if isinstance(proof, dict) else None
    if status == 404:
        return "denied"
    if status != 200 or not isinstance(nodes, list) or not all(is_hex64(n) for n in nodes):
        raise Unusable(
            f"the consistency proof from {smaller['size']} to {larger['size']} answered {status}"
        )
    if not merkle.verify_consistency(
        smaller["size"],
        larger["size"],
        bytes.fromhex(smaller["root"]),
        bytes.fromhex(larger["root"]),
        [bytes.fromhex(n) for n in nodes],
    ):
        return "unjoined"
    return None


def _served(folder: Path) -> Served | None:
    """What this witness keeps of when it was last served the kept checkpoint as the latest, if
    it keeps that (an earlier version's ``served_at`` is not: it is started afresh)."""
    path = folder / SERVED_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc}") from None
    try:
        served = served_of(whole_number_json(text))
    except ValueError:
        served = None
    if served is None:
        raise Unusable(f"{path} does not hold when the kept checkpoint was last served")
    return served


def _served_again(folder: Path, seen: Mapping[str, Any], now: datetime) -> None:
    """Remember that ``seen`` (the kept checkpoint) was served as the latest at ``now``."""
    doc = seen["document"]
    served = served_again(_served(folder), doc["size"], parse_time(doc["time"]), now)
    _write(folder / SERVED_FILE, served.as_json())
    (folder / OLD_SERVED_FILE).unlink(missing_ok=True)


def _keep(folder: Path, seen: Mapping[str, Any], now: datetime) -> None:
    """Keep ``seen``, served as the latest checkpoint at ``now``."""
    _served_again(folder, seen, now)
    _write(folder / STATE_FILE, seen)


def _compare(
    folder: Path,
    base: str,
    kept: dict[str, Any] | None,
    seen: dict[str, Any],
    timeout: float,
    now: datetime,
) -> Verdict:
    new = seen["document"]
    if kept is None:
        _keep(folder, seen, now)
        return Verdict(EXIT_OK, f"OK: first checkpoint kept: {_described(new)}")
    old = kept["document"]
    both = f"kept {_described(old)}, served {_described(new)}"
    if new["size"] >= old["size"] and backdated(old, new):
        why = (
            "BACKDATED: the served checkpoint is dated before the kept one, which it follows: "
            f"kept {_dated(old)}, served {_dated(new)}"
        )
        return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, seen, why)}")
    served = _served(folder)
    if served is not None and served_backdated(served, new["size"], parse_time(new["time"])):
        why = (
            f"BACKDATED: the served checkpoint is dated more than {SERVED_SLACK_TEXT} before "
            f"{format_time(served.least)}, which the service's clock had reached when this "
            f"witness was last served the kept one as the latest, at {format_time(served.at)} "
            "by its own clock: signed by then, it was withheld, or it is dated back: kept "
            f"{_dated(old)}, served {_dated(new)}"
        )
        return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, seen, why)}")
    if new["size"] < old["size"]:
        why = f"SHRUNK: the log is smaller than a checkpoint the service signed: {both}"
        return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, seen, why)}")
    if new["size"] == old["size"]:
        if new["root"] != old["root"]:
            why = f"FORK: two signed checkpoints over {new['size']} entries differ: {both}"
            return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, seen, why)}")
        _served_again(folder, seen, now)
        return Verdict(EXIT_OK, f"OK: unchanged, {_described(new)}")
    try:
        problem = _unproved(base, old, new, timeout)
    except Unusable as exc:
        return Verdict(
            EXIT_UNUSABLE, _unproven_line(kept, _remember_unproven(folder, seen, str(exc), now))
        )
    if problem is not None:
        why = (
            f"FORK: the service no longer proves the checkpoint it signed over {old['size']} "
            f"entries: {both}"
            if problem == "denied"
            else f"FORK: the served checkpoint does not extend the kept one: {both}"
        )
        return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, seen, why)}")
    _keep(folder, seen, now)
    return Verdict(EXIT_OK, f"OK: consistent, {both}; kept the new one")


def _unproven(folder: Path) -> list[dict[str, Any]]:
    """The checkpoints this witness was shown and could not join to the kept one: each
    ``{"checkpoint", "why", "at"}``, in the order they were shown, one per size."""
    path = folder / UNPROVEN_FILE
    try:
        held = whole_number_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise Unusable(f"cannot read {path}: {exc}") from None
    if not isinstance(held, list) or not all(
        isinstance(one, dict) and checkpoint_shape_problem(one.get("checkpoint")) is None
        for one in held
    ):
        raise Unusable(f"{path} does not hold the checkpoints shown unproven")
    return held


def _unproven_line(kept: Mapping[str, Any], unproven: list[dict[str, Any]]) -> str:
    shown = "; ".join(
        f"size {one['checkpoint']['document']['size']} root "
        f"{one['checkpoint']['document']['root']}, "
        + (f"published in {one['published_in']}, " if one.get("published_in") else "")
        + f"shown at {one['at']}: {one['why']}"
        for one in unproven
    )
    return (
        "UNPROVEN: no consistency proof joins the kept checkpoint "
        f"({_described(kept['document'])}) with what this witness was shown since ({shown}): a "
        "casino that forked its log hides the fork so, and an outage reads the same; they are "
        f"kept in {UNPROVEN_FILE} and asked for again on every run"
    )


def _remember_unproven(
    folder: Path,
    seen: Mapping[str, Any],
    why: str,
    now: datetime,
    *,
    published_in: str | None = None,
) -> list[dict[str, Any]]:
    """Keep a signed checkpoint whose consistency proof the service withheld, served to this
    witness or published by another (``published_in``: the file): it may be the only trace of a
    fork, which the service could otherwise end by showing the true log again on the next run.
    Returns all the checkpoints kept so."""
    unproven = _unproven(folder)
    doc = seen["document"]
    shown = {"why": why, "at": format_time(now), "published_in": published_in}
    same = next((one for one in unproven if one["checkpoint"]["document"] == doc), None)
    if same is not None:
        same.update(shown)
    else:
        unproven.append({"checkpoint": dict(seen), **shown})
    _write(folder / UNPROVEN_FILE, unproven)
    return unproven


def _against_unproven(folder: Path, shown: Mapping[str, Any], where: str) -> Verdict | None:
    """A contradiction at once, with the evidence, if ``shown`` (``where``: ``served``, or
    ``published in FILE``) has another root than a checkpoint of its size kept shown unproven,
    or is dated against one the wrong way for their sizes (``BACKDATED``): each is signed and
    dated by the service, and a proof may be withheld for each alike, so joining either to the
    kept one may never come to it."""
    doc = shown["document"]
    for one in _unproven(folder):
        held = one["checkpoint"]
        other = held["document"]
        before = f"published in {one['published_in']}, " if one.get("published_in") else ""
        smaller, larger = sorted((other, doc), key=lambda found: int(found["size"]))
        if other["size"] == doc["size"] and other["root"] != doc["root"]:
            why = (
                f"FORK: two signed checkpoints over {doc['size']} entries differ: {before}shown "
                f"unproven at {one['at']} {_described(other)}, {where} {_described(doc)}"
            )
        elif backdated(smaller, larger):
            why = (
                "BACKDATED: of two signed checkpoints, the one over more entries is dated before "
                f"the one over fewer: {before}shown unproven at {one['at']} {_dated(other)}, "
                f"{where} {_dated(doc)}"
            )
        else:
            continue
        return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, held, shown, why)}")
    return None


def _after_unproven(folder: Path, verdict: Verdict) -> Verdict:
    """A run that passed (exit 0) while checkpoints shown unproven are kept is exit 2: ``UNPROVEN``
    with them first, then what the run found."""
    unproven = _unproven(folder)
    kept = _load_state(folder)
    if verdict.code != EXIT_OK or not unproven or kept is None:
        return verdict
    return Verdict(EXIT_UNUSABLE, f"{_unproven_line(kept, unproven)}; this run: {verdict.line}")


def _join_unproven(
    folder: Path, base: str, kept: dict[str, Any] | None, timeout: float
) -> Verdict | None:
    """Ask again for a proof joining each checkpoint shown unproven to the kept one, dropping
    those joined: exit 1 with the evidence when one contradicts it, else ``None`` (those whose
    proof is withheld again stay kept, with the latest reason)."""
    unproven = _unproven(folder)
    if not unproven or kept is None:
        return None
    old = kept["document"]
    left = []
    for one in unproven:
        shown = one["checkpoint"]
        new = shown["document"]
        where = f"published in {one['published_in']}, " if one.get("published_in") else ""
        both = f"kept {_described(old)}, {where}shown unproven at {one['at']} {_described(new)}"
        smaller, larger = sorted((old, new), key=lambda doc: int(doc["size"]))
        why = None
        if backdated(smaller, larger):
            why = (
                "BACKDATED: of two signed checkpoints, the one over more entries is dated before "
                f"the one over fewer: kept {_dated(old)}, shown unproven {_dated(new)}"
            )
        elif old["size"] == new["size"]:
            if old["root"] != new["root"]:
                why = f"FORK: two signed checkpoints over {old['size']} entries differ: {both}"
        else:
            try:
                problem = _unproved(base, smaller, larger, timeout)
            except Unusable as exc:
                left.append(dict(one, why=str(exc)))
                continue
            if problem is not None:
                why = f"FORK: {PUBLISHED_PROBLEMS[problem]}: {both}"
        if why is not None:
            return Verdict(EXIT_FAILED, f"{why}; evidence in {_evidence(folder, kept, shown, why)}")
    _write(folder / UNPROVEN_FILE, left)
    return None
