"""What services need besides the database: settings and the signing key.

They travel in ``session.info["context"]`` (set by the app's sessionmaker), so services take
only a ``Session`` and never import Flask.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.orm import Session

from ..config import SettingsError
from ..core import fairness
from ..instance import read_or_create


@dataclass
class ServiceContext:
    """Settings and keys shared by every service call of one app."""

    #: Where the signing key is (made there when first needed: see :attr:`signing_key`).
    signing_key_file: Path
    settings: Mapping[str, Any]
    public_key_registered: bool = field(default=False)
    #: The process whose background integrator runs (PostgreSQL): its use cases leave their
    #: audit entries to it, sequenced in batches, instead of one integration each.
    integrator_pid: int | None = None
    #: What the process keeps between transactions, each entry owned by one service module
    #: (accounts' ids, table settings by version), never anything a rollback could undo.
    cache: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def signing_key(self) -> Ed25519PrivateKey:
        """The key in :attr:`signing_key_file`, read when first needed, and made there then
        (mode 0600) if missing: a command that only prints signs nothing, and makes no key.

        :raises SettingsError: as :func:`load_or_create_signing_key`.
        """
        return load_or_create_signing_key(self.signing_key_file)

    @property
    def public_key_hex(self) -> str:
        return fairness.public_key_hex(self.signing_key)

    def setting(self, name: str) -> int:
        return int(self.settings[name])


def context_of(session: Session) -> ServiceContext:
    """Return the service context carried by ``session``."""
    return cast(ServiceContext, session.info["context"])


def load_or_create_signing_key(path: str | Path) -> Ed25519PrivateKey:
    """Read the Ed25519 key from ``path``, creating it (mode 0600) on first start.

    :raises SettingsError: if it cannot be read or made, or holds no Ed25519 private key in PEM.
    """
    try:
        pem = read_or_create(
            Path(path), lambda: fairness.private_key_pem(fairness.new_signing_key())
        )
        return fairness.load_private_key(pem)
    except OSError as exc:
        raise SettingsError(f"SIGNING_KEY_FILE {path} cannot be used: {exc.strerror}") from None
    except ValueError:
        raise SettingsError(
            f"SIGNING_KEY_FILE {path} holds no unencrypted Ed25519 private key in PEM"
        ) from None
