"""The fairness page: commitments, seeds, rotation, verification bundles and the verifier."""

from __future__ import annotations

import hashlib
from pathlib import Path

from flask import Blueprint
from flask import flash
from flask import g
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import request
from flask import send_file
from flask import url_for
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import NotFound

from ..core import fairness as core_fairness
from ..core.errors import InvalidInput
from ..db import get_session
from ..services import fairness
from .security import login_required
from .security import session_user

bp = Blueprint("fairness", __name__, url_prefix="/fairness")

VERIFIER = Path(__file__).resolve().parent.parent / "verify.py"


def verifier_digest() -> str | None:
    """Return the SHA-256 of the verifier file as served, or None if it is missing."""
    try:
        return hashlib.sha256(VERIFIER.read_bytes()).hexdigest()
    except OSError:
        return None


@bp.get("")
def index() -> ResponseReturnValue:
    db = get_session()
    key = fairness.public_key_info(db)
    user = session_user()
    active = pairs = None
    if user is not None:
        active = fairness.active_seed_pair(db, user.id)
        pairs = [p for p in fairness.seed_pairs(db, user.id) if p["status"] == "revealed"]
    return render_template(
        "fairness/index.html",
        key=key,
        active=active,
        revealed=pairs,
        verifier_sha256=verifier_digest(),
        suggested_seed=core_fairness.new_client_seed(),
    )


@bp.post("/rotate")
@login_required
def rotate() -> ResponseReturnValue:
    client_seed = request.form.get("client_seed", "")
    if not client_seed.strip():
        # Blank is no seed: the server must not silently pick one the player never saw.
        raise InvalidInput(
            "Enter a client seed: 1 to 64 characters, not only spaces (or keep the suggested one).",
            field="client_seed",
        )
    try:
        result = fairness.rotate(get_session(), g.user.id, client_seed)
    except InvalidInput as error:
        if error.details.get("field") != "client_seed":
            raise
        raise InvalidInput(
            f"The client seed must be 1 to {core_fairness.CLIENT_SEED_MAX} characters of text.",
            field="client_seed",
        ) from error
    revealed = result["revealed"]["document"]
    flash(
        f"Seed pair #{revealed['seed_pair_id']} is revealed: its server seed was "
        f"{revealed['server_seed']}. You can verify its {revealed['rounds']} rounds below.",
        "ok",
    )
    return redirect(url_for("fairness.index") + "#revealed", code=303)


@bp.get("/seed-pairs/<id:seed_pair_id>/bundle.json")
@login_required
def bundle(seed_pair_id: int) -> ResponseReturnValue:
    response = jsonify(fairness.bundle(get_session(), g.user.id, seed_pair_id))
    response.headers["Content-Disposition"] = (
        f'attachment; filename="bundle-{seed_pair_id}.json"'
        if request.args.get("download")
        else f'inline; filename="bundle-{seed_pair_id}.json"'
    )
    return response


@bp.get("/verify.py")
def verifier() -> ResponseReturnValue:
    if not VERIFIER.is_file():
        raise NotFound("the verifier is not published on this server")
    return send_file(
        VERIFIER, mimetype="text/x-python", as_attachment=True, download_name="verify.py"
    )
