"""A small incremental decoder for Server-Sent Events (the Messages API's stream).

It turns the bytes of a ``text/event-stream`` body, in whatever pieces they arrive, into
``(event name, data)`` pairs, following the WHATWG event-stream rules that matter here:
lines end with ``\\n``, ``\\r\\n`` or ``\\r`` (also when split between pieces), ``data:``
lines of one event are joined with ``\\n``, one space after the colon is dropped, comment
lines (``:``) and the ``id``/``retry`` fields are ignored, a leading byte order mark is
dropped, a field name alone has an empty value, and an event with data is dispatched at
the blank line that ends it (one without data is not; an unfinished event at the end of
the body is dropped: call :meth:`SSEDecoder.finish` at the end, so a body ending in
``\r\r`` keeps its last event).
The data stays bytes: the caller decodes and parses only the events it wants.
"""

from __future__ import annotations

__all__ = ["SSEDecoder"]

_NAMES = {
    name.encode(): name
    for name in (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    )
}


_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Feed body chunks to :meth:`feed`; it returns the events they complete."""

    __slots__ = ("_data", "_event", "_first", "_pending")

    def __init__(self) -> None:
        self._first = True
        self._pending = b""  # an unfinished line (and a held-back trailing "\r")
        self._event = ""
        self._data: list[bytes] = []

    def finish(self) -> list[tuple[str, bytes]]:
        """The end of the body: a held-back ``\r`` was a line end after all (it may end
        the last event); an unfinished event is dropped, as WHATWG says."""
        out = self.feed(b"\n") if self._pending.endswith(b"\r") else []
        self._pending, self._data, self._event = b"", [], ""
        return out

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """The events that ``chunk`` completes, in order, as (name, data) pairs; the name
        is "" when the event had no ``event:`` line."""
        if self._first:  # a byte order mark may open the stream
            self._first = False
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if not self._pending and not self._data and not self._event:
            # The usual piece: exactly one "event: NAME\ndata: DATA\n\n".
            head, _, rest = chunk.partition(b"\n")
            if (
                head.startswith(b"event: ")
                and rest.startswith(b"data: ")
                and rest.find(b"\n") == len(rest) - 2
                and rest.endswith(b"\n\n")
                and b"\r" not in chunk
            ):
                name = head[7:]
                return [(_NAMES.get(name) or name.decode("utf-8", errors="replace"), rest[6:-2])]
        buf = self._pending + chunk if self._pending else chunk
        tail = b""
        if b"\r" in buf:
            if buf.endswith(b"\r"):  # its "\n" may come with the next chunk
                buf, tail = buf[:-1], b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._pending = lines.pop() + tail
        out: list[tuple[str, bytes]] = []
        data = self._data
        for line in lines:
            if line:
                if line.startswith(b"data:"):
                    data.append(line[6:] if line.startswith(b"data: ") else line[5:])
                elif line.startswith(b"event:"):
                    value = line[7:] if line.startswith(b"event: ") else line[6:]
                    self._event = value.decode("utf-8", errors="replace")
                elif line == b"data":  # a field name alone: its value is empty
                    data.append(b"")
                elif line == b"event":
                    self._event = ""
                # comments (":..."), "id", "retry" and unknown fields: ignored
            elif data:
                out.append((self._event, data[0] if len(data) == 1 else b"\n".join(data)))
                data = self._data = []
                self._event = ""
            else:  # a blank line ending no data: nothing is dispatched (WHATWG)
                self._event = ""
        return out
