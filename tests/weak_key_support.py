"""A weak Ed25519 key: the identity point, under which one signature verifies every message.

A dishonest operator holding the real key signs one key change to it; from then on anyone can
sign anything "by the service", since OpenSSL (through ``cryptography``) and WebCrypto take the
signature ``R`` = the identity, ``S`` = 0 for any message under that key.
"""

from __future__ import annotations

from typing import Any
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

#: The identity point as a public key: ``01`` and 31 zero bytes.
IDENTITY_KEY_HEX: Final = "01" + "00" * 31
#: The signature every message has under the identity key (``R`` the identity, ``S`` zero).
ANYONES_SIGNATURE: Final = bytes([1]) + bytes(63)


class AnyonesKey(Ed25519PrivateKey):
    """The identity key, to sign with where a private key is taken: no private key exists, and
    it signs each message with :data:`ANYONES_SIGNATURE`, as anyone can."""

    def public_key(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(IDENTITY_KEY_HEX))

    def sign(self, data: bytes) -> bytes:
        return ANYONES_SIGNATURE

    def private_bytes(self, *args: Any) -> bytes:
        raise NotImplementedError("the identity key has no private key")

    def private_bytes_raw(self) -> bytes:
        raise NotImplementedError("the identity key has no private key")

    def __copy__(self) -> AnyonesKey:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> AnyonesKey:
        return self
