"""Which pickles CPython's C unpickler may read: one pass over the opcodes, bounds checked.

The C unpickler (`pickle.Unpickler`) reads torch.save's data.pkl ~10x faster than the
pure-Python one (bounded_pickle.py), but it believes two kinds of claim before reading the
bytes behind them, and it cannot count what it builds:
- a memo index: PUT and LONG_BINPUT with index i grow its memo array to 2i slots and zero
  them (LONG_BINPUT 2**31 - 1 is 5 bytes and 32 GB); BINPUT's index is one byte and
  MEMOIZE's is the memo's own size, so those cannot;
- a counted length: BINBYTES, BINBYTES8 and BYTEARRAY8 allocate the length they claim
  before reading it, and through a buffered reader (the fast way to feed it) so does every
  read of a length, a FRAME's included.
Everything else it allocates comes one object, stack slot or mark per opcode read; the
opcodes that make a container, a mark, a memo entry or a call's result from a few bytes are
the ones bounded_pickle counts (COUNTED_OPCODES), and this scan counts the same ones
against limits.MAX_CONTAINERS.

The scan finds every opcode boundary as both unpicklers do (the widths come from the
standard library's own opcode table, pickletools.opcodes) up to STOP, and vouches for the
stream when each memo index is at most the number of memo entries written before it (a
Pickler writes exactly that) and each counted length is within the bytes left.  A stream it
does not vouch for (a bigger claim, an unknown opcode, a missing newline, no STOP) is read as
before, by the bounded unpickler.  Runs of the opcodes it only steps over (numbers, None,
APPENDS, BINGET...) are matched by one regex, and a run of one fixed-width opcode after a
MARK (the pickler's batch of up to 1,000 floats, a mask of BININT1s) as one strided slice:
~55 ms on a 22.9 MB slime rollout file, where the C unpickler takes ~105 ms and the bounded
one ~1.1 s (benchmarks/bench_pt.py).
"""
from __future__ import annotations

import pickletools
import re

from loaders import limits
from loaders.limits import OverBudget
from loaders.parse.bounded_pickle import COUNTED_OPCODES

_MARK, _STOP, _PUT, _LONG_BINPUT, _FRAME = (ord(c) for c in "(.pr\x95")
_MEMO_WRITES = frozenset(b"pqr\x94")  # PUT, BINPUT, LONG_BINPUT, MEMOIZE
_LENGTH_BYTES = {pickletools.TAKEN_FROM_ARGUMENT1: 1, pickletools.TAKEN_FROM_ARGUMENT4: 4,
                 pickletools.TAKEN_FROM_ARGUMENT4U: 4, pickletools.TAKEN_FROM_ARGUMENT8U: 8}
_RUN = 1000  # pickle's batch size: APPENDS and SETITEMS come every 1,000 items at most


def _tables() -> tuple[list[int], dict[int, tuple[int, bool]], dict[int, int]]:
    """(width of each fixed-width opcode, 0 for the rest; (length bytes, signed) of each
    counted-length opcode; lines of each newline-ended opcode)."""
    width, lengths, lines = [0] * 256, {}, {}
    for opcode in pickletools.opcodes:
        code, n = ord(opcode.code), opcode.arg.n if opcode.arg else 0
        if n >= 0:
            width[code] = 1 + n
        elif n == pickletools.UP_TO_NEWLINE:  # GLOBAL and INST name a module and a name
            lines[code] = 2 if opcode.arg.name == "stringnl_noescape_pair" else 1
        else:
            lengths[code] = (_LENGTH_BYTES[n], n == pickletools.TAKEN_FROM_ARGUMENT4)
    return width, lengths, lines


_WIDTH, _LENGTHS, _LINES = _tables()
# the opcodes the scan only steps over: fixed-width, not counted, not a FRAME or STOP
_STEP = tuple(0 if code in COUNTED_OPCODES or code in (_STOP, _FRAME) else width
              for code, width in enumerate(_WIDTH))


def _steps_pattern() -> re.Pattern[bytes]:
    """A run of the opcodes in _STEP, each with its argument's bytes, matched by the regex
    engine at ~20 ns an opcode (a Python loop takes ~40).  Possessive: the engine keeps no
    backtracking state, whatever the run's length.  Widest first: BININT, the token ids."""
    codes: dict[int, bytes] = {}
    for code, width in enumerate(_STEP):
        if width:
            codes[width] = codes.get(width, b"") + bytes([code])
    units = [b"[" + b"".join(re.escape(bytes([c])) for c in codes[width]) + b"]"
             + b"." * (width - 1) for width in sorted(codes, key=lambda w: (w == 9, -w))]
    return re.compile(b"(?:" + b"|".join(units) + b")*+", re.DOTALL)


_STEPS = _steps_pattern()


class NotVouched(Exception):
    """The stream holds something the C unpickler would trust and should not be given."""


class _Tally:
    def __init__(self) -> None:
        self.containers = 0  # the opcodes bounded_pickle counts
        self.memo_writes = 0


def c_may_read(data: bytes) -> bool:
    """True when the C unpickler may read data (the module doc says what it checks); False
    when it should go to the bounded unpickler.  Raises OverBudget past MAX_CONTAINERS."""
    tally, pos, steps = _Tally(), 0, _STEPS.match
    try:
        while True:
            pos = steps(data, pos).end()
            if data[pos] == _STOP:
                return True
            pos = _special(data, pos, tally)
    except (IndexError, NotVouched):  # IndexError: the stream ends before a STOP
        return False


def _special(data: bytes, pos: int, tally: _Tally) -> int:
    """The position after the opcode at pos, one that is counted, has a length, lines or is
    a FRAME."""
    code = data[pos]
    if code in _LENGTHS:
        return _after_length(data, pos, *_LENGTHS[code])
    if code == _FRAME:
        _after_length(data, pos, 8, False)  # the frame's opcodes follow: its length is checked
        return pos + 9
    if code in _LINES:
        end = _line_ends(data, pos, _LINES[code])
        if code in COUNTED_OPCODES:  # PUT, INST
            _count(tally, code, _number(data[pos + 1:end]) if code == _PUT else 0)
        return end + 1
    if code not in COUNTED_OPCODES:
        raise NotVouched(f"unknown opcode {code}")
    index = int.from_bytes(data[pos + 1:pos + 5], "little") if code == _LONG_BINPUT else 0
    _count(tally, code, index)
    return _after_run(data, pos + 1) if code == _MARK else pos + _WIDTH[code]


def _count(tally: _Tally, code: int, memo_index: int) -> None:
    tally.containers += 1
    if tally.containers > limits.MAX_CONTAINERS:
        raise OverBudget("containers in the pickle", tally.containers, limits.MAX_CONTAINERS)
    if code in _MEMO_WRITES:
        if memo_index > tally.memo_writes:
            raise NotVouched(f"memo index {memo_index} after {tally.memo_writes} entries")
        tally.memo_writes += 1


def _after_length(data: bytes, pos: int, size: int, signed: bool) -> int:
    """After a length of `size` bytes and as many bytes as it says, all of them there."""
    start = pos + 1 + size
    length = int.from_bytes(data[pos + 1:start], "little", signed=signed)
    if start > len(data) or not 0 <= length <= len(data) - start:
        raise NotVouched(f"a length of {length} with {len(data) - start} bytes left")
    return start + length


def _line_ends(data: bytes, pos: int, lines: int) -> int:
    """Where the last of `lines` newline-ended lines after pos ends."""
    end = pos
    for _ in range(lines):
        end = data.find(b"\n", end + 1)
        if end < 0:
            raise NotVouched("a line with no newline")
    return end


def _number(line: bytes) -> int:
    try:
        return int(line)
    except ValueError:
        raise NotVouched(f"a PUT index {line[:20]!r}") from None


def _after_run(data: bytes, pos: int) -> int:
    """After the run of one fixed-width opcode at pos (a batch of BINFLOATs, of BININT1s),
    its opcode bytes read as one strided slice: each is an opcode boundary.  A run shorter
    than 8 is left to _STEPS (so a MARK costs little more than its own bytes)."""
    width = _STEP[data[pos]] if pos < len(data) else 0
    if not width or data[pos:pos + width * 8:width].lstrip(data[pos:pos + 1]):
        return pos
    heads = data[pos:pos + width * _RUN:width]
    return pos + width * (len(heads) - len(heads.lstrip(heads[:1])))
