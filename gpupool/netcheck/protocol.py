"""The probe's wire protocol: one 12-byte hello, a status byte (after a challenge when the
server has a token), then one mode per connection.

    hello   = magic "GPNC" | version (1 byte) | mode (1 byte) | reserved (2 bytes) | param (4 bytes)
    status  = 0 ok | 1 busy (session limit reached) | 2 bad hello | 3 challenge | 4 denied
              | 5 other version

With a shared token (``--token-file`` on both ends) the server answers the hello with status 3
and a 32-byte random nonce; the client sends HMAC-SHA256(token, CONTEXT | nonce | hello) and
the server answers 0 (ok) or 4 (denied). The token itself never crosses the network, and a
recorded answer is worth nothing for the next nonce: nobody without the token can make the
server echo, swallow or send a byte.

Modes (``param``):

- ECHO (message size in bytes): each message the client sends is sent back as it is, until the
  client closes. Small messages with TCP_NODELAY on both ends measure the round trip a
  synchronous remoted call pays.
- SINK (unused): the client sends until it shuts down its side; the server then answers with
  the number of bytes it read (one unsigned 64-bit integer). The client times the transfer on
  its own clock, from its first send to that answer, which only comes once every byte has
  arrived, and checks the count against what it sent: the figure never rests on the server's
  word.
- SOURCE (milliseconds): the server sends for that long (at most its session limit), then
  closes; the client counts and times what it reads.

Everything is big-endian. Nothing in the protocol names a file, a command or an address.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import Final

MAGIC: Final = b"GPNC"
VERSION: Final = 2  # 2: client-timed SINK (a count, no server clock), the token challenge
HELLO: Final = struct.Struct("!4sBBHI")
RESULT: Final = struct.Struct("!Q")

ECHO: Final = 1
SINK: Final = 2
SOURCE: Final = 3
MODES: Final = {ECHO: "echo", SINK: "sink", SOURCE: "source"}

OK: Final = b"\x00"
BUSY: Final = b"\x01"
BAD: Final = b"\x02"
CHALLENGE: Final = b"\x03"
DENIED: Final = b"\x04"
OTHER_VERSION: Final = b"\x05"

NONCE_BYTES: Final = 32
CONTEXT: Final = b"gpupool netcheck v2 token\x00"
MIN_TOKEN_BYTES: Final = 16
MAX_TOKEN_BYTES: Final = 4096

MAX_ECHO_BYTES: Final = 65536
CHUNK: Final = 1 << 20  # bulk transfers read and write 1 MiB at a time
DEFAULT_PORT: Final = 9801


def hello(mode: int, param: int) -> bytes:
    return HELLO.pack(MAGIC, VERSION, mode, 0, param)


def answer(token: bytes, nonce: bytes, greeting: bytes) -> bytes:
    """The client's answer to a challenge: HMAC-SHA256 of the nonce and the hello it sent."""
    return hmac.new(token, CONTEXT + nonce + greeting, hashlib.sha256).digest()


def answer_ok(token: bytes, nonce: bytes, greeting: bytes, got: bytes) -> bool:
    return hmac.compare_digest(answer(token, nonce, greeting), got)
