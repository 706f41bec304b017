"""Cut long text to a byte budget, keeping its head and its tail."""

from __future__ import annotations


def _marker(removed: int) -> str:
    return f"\n… [truncated {removed} bytes] …\n"


def truncate(s: str, max_bytes: int) -> str:
    """Return ``s`` unchanged if its UTF-8 form fits in ``max_bytes``; otherwise its head, a
    marker saying how many bytes were cut, and its tail, at most ``max_bytes`` in all.

    Cuts fall on code point boundaries. The tail stays because output usually ends with
    what matters (the error, the summary). A budget too small for the marker gets a
    head-only cut.
    """
    if len(s) * 4 <= max_bytes:  # fits even if every code point takes 4 bytes
        return s
    data = s.encode("utf-8", "surrogatepass")
    total = len(data)
    if total <= max_bytes:
        return s
    if max_bytes <= 0:
        return ""
    # The marker's length depends on the count it reports; size it for the largest count.
    budget = max_bytes - len(_marker(total).encode())
    if budget <= 0:
        return _decode(data[: _head_end(data, max_bytes)])
    head = _head_end(data, budget - budget // 2)
    tail = _tail_start(data, total - budget // 2)
    return _decode(data[:head]) + _marker(tail - head) + _decode(data[tail:])


def _head_end(data: bytes, end: int) -> int:
    """The largest code point boundary <= end."""
    while 0 < end < len(data) and 0x80 <= data[end] < 0xC0:
        end -= 1
    return end


def _tail_start(data: bytes, start: int) -> int:
    """The smallest code point boundary >= start."""
    while start < len(data) and 0x80 <= data[start] < 0xC0:
        start += 1
    return start


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")
