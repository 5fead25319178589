"""The shared token of ``--token-file`` (both ends): a small secret file, read once.

A token keeps everybody else on the network from using the server (a proxy host would send
gigabytes for anyone who asked). It is at least 16 characters (``openssl rand -hex 32`` makes
a good one); surrounding whitespace and the final newline are not part of it. The file is a
regular file of at most 4 KiB; keep it readable by its owner only (``chmod 600``).
"""

from __future__ import annotations

from gpupool.errors import InputError
from gpupool.netcheck.protocol import MAX_TOKEN_BYTES, MIN_TOKEN_BYTES


def read_token(path: str) -> bytes:
    """The token in ``path``; one InputError line (never showing the token) otherwise."""
    from gpupool.inputs import read_regular

    shown = f"--token-file {path}"
    token = read_regular(path, shown, limit=MAX_TOKEN_BYTES, what="a token file").strip()
    if len(token) < MIN_TOKEN_BYTES:
        raise InputError(f"{shown}: expected a shared token of at least {MIN_TOKEN_BYTES} "
                         f"characters (make one with `openssl rand -hex 32`), got "
                         f"{len(token)}")
    return token
