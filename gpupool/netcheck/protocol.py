"""The probe's wire protocol: one 12-byte hello, one status byte, then one mode per connection.

    hello   = magic "GPNC" | version (1 byte) | mode (1 byte) | reserved (2 bytes) | param (4 bytes)
    status  = 0 ok | 1 busy (session limit reached) | 2 bad hello

Modes (``param``):

- ECHO (message size in bytes): each message the client sends is sent back as it is, until the
  client closes. Small messages with TCP_NODELAY on both ends measure the round trip a
  synchronous remoted call pays.
- SINK (unused): the client sends until it shuts down its side; the server then answers with
  ``bytes | first_ns | last_ns`` (three unsigned 64-bit integers, the server's monotonic
  clock): when its first and its last read returned, and the bytes it read in between (the
  first read's bytes arrived before the clock started, so they are not counted). Several SINK
  connections at once measure the aggregate of several streams on one clock.
- SOURCE (milliseconds): the server sends for that long, then closes; the client counts.

Everything is big-endian. Nothing in the protocol names a file, a command or an address.
"""

from __future__ import annotations

import struct
from typing import Final

MAGIC: Final = b"GPNC"
VERSION: Final = 1
HELLO: Final = struct.Struct("!4sBBHI")
RESULT: Final = struct.Struct("!QQQ")

ECHO: Final = 1
SINK: Final = 2
SOURCE: Final = 3
MODES: Final = {ECHO: "echo", SINK: "sink", SOURCE: "source"}

OK: Final = b"\x00"
BUSY: Final = b"\x01"
BAD: Final = b"\x02"

MAX_ECHO_BYTES: Final = 65536
CHUNK: Final = 1 << 20  # bulk transfers read and write 1 MiB at a time
DEFAULT_PORT: Final = 9801


def hello(mode: int, param: int) -> bytes:
    return HELLO.pack(MAGIC, VERSION, mode, 0, param)
