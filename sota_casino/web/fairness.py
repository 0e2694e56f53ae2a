"""The fairness page: commitments, seeds, rotation, verification bundles and the verifier."""

from __future__ import annotations

from io import BytesIO
from typing import Any

from flask import Blueprint
from flask import g
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import request
from flask import send_file
from flask import url_for
from flask.typing import ResponseReturnValue

from ..core import fairness as core_fairness
from ..core.errors import InvalidInput
from ..core.marks import N_
from ..core.marks import Nn_
from ..db import get_session
from ..services import audit
from ..services import fairness
from ..services import transparency
from ..services.results import ActiveSeedPair
from ..verify.build import verifier_archive
from .i18n import flash_phrase
from .i18n import phrase
from .security import login_required
from .visitor import session_user

bp = Blueprint("fairness", __name__, url_prefix="/fairness")


def verifier_digest() -> str | None:
    """Return the SHA-256 of the standalone verifier as served."""
    return verifier_archive().sha256


@bp.app_template_global()
def service_public_key() -> str:
    """The service's public key as hex, for pages that show it (the browser pins it)."""
    return fairness.public_key_info(get_session()).public_key_hex


@bp.app_template_global()
def log_checkpoint() -> dict[str, Any] | None:
    """The audit log's latest signed checkpoint, for the browser's witness (transparency.js);
    None before the first."""
    signed = transparency.latest_signed(get_session())
    return {"checkpoint": signed} if signed else None


@bp.app_template_global()
def active_seed_pair() -> ActiveSeedPair | None:
    """The logged-in player's active pair, whose signed commitment pages show before play so
    that the browser can keep its own copy (and check a rotation it just sent); None for a
    visitor."""
    user = session_user()
    if user is None:
        return None
    return fairness.active_seed_pair(get_session(), user.id)


@bp.get("")
def index() -> ResponseReturnValue:
    db = get_session()
    key = fairness.public_key_info(db)
    user = session_user()
    active = pairs = waiting = None
    if user is not None:
        active = fairness.active_seed_pair(db, user.id)
        pairs = [p for p in fairness.seed_pairs(db, user.id) if p["status"] == "revealed"]
        waiting = fairness.waiting_round(db, user.id)
    return render_template(
        "fairness/index.html",
        key=key,
        active=active,
        revealed=pairs,
        waiting=waiting,
        verifier_sha256=verifier_digest(),
    )


@bp.post("/rotate")
@login_required
def rotate() -> ResponseReturnValue:
    client_seed = request.form.get("client_seed", "")
    if not client_seed.strip():
        # Blank is no seed: the server must not silently pick one the player never saw.
        raise InvalidInput(
            N_(
                "Enter a client seed: 1 to 64 characters, not only spaces (or keep the suggested "
                "one)."
            ),
            field="client_seed",
        )
    try:
        result = fairness.rotate(get_session(), g.user.id, client_seed)
    except InvalidInput as error:
        if error.details.get("field") != "client_seed":
            raise
        raise InvalidInput(
            N_("The client seed must be 1 to %(max)s characters of text."),
            params={"max": core_fairness.CLIENT_SEED_MAX},
            field="client_seed",
        ) from error
    revealed = result.revealed["document"]
    words = {"pair": revealed["seed_pair_id"], "seed": revealed["server_seed"]}
    if revealed["rounds"]:
        # The rounds counted with their plural form: "its 1 round", "sen 1 pelikierroksen".
        said = phrase(
            Nn_(
                "Seed pair #%(pair)s is revealed: its server seed was %(seed)s. You can verify "
                "its %(num)s round below.",
                "Seed pair #%(pair)s is revealed: its server seed was %(seed)s. You can verify "
                "its %(num)s rounds below.",
            ),
            {**words, "num": {"count": revealed["rounds"]}},
        )
    else:  # a pair revealed before it was played with: there is nothing to verify
        said = phrase(
            N_(
                "Seed pair #%(pair)s is revealed: its server seed was %(seed)s. No rounds were "
                "played with it."
            ),
            words,
        )
    flash_phrase(said, "ok")
    return redirect(url_for("fairness.index") + "#revealed", code=303)


@bp.get("/seed-pairs/<id:seed_pair_id>/bundle.json")
@login_required
def bundle(seed_pair_id: int) -> ResponseReturnValue:
    audit.sign_if_due(get_session())  # so that its newest rounds can be anchored too
    response = jsonify(fairness.bundle(get_session(), g.user.id, seed_pair_id))
    response.headers["Content-Disposition"] = (
        f'attachment; filename="bundle-{seed_pair_id}.json"'
        if request.args.get("download")
        else f'inline; filename="bundle-{seed_pair_id}.json"'
    )
    return response


@bp.get("/verify.pyz")
def verifier() -> ResponseReturnValue:
    return send_file(
        BytesIO(verifier_archive().data),
        mimetype="application/zip",
        as_attachment=True,
        download_name="verify.pyz",
    )
