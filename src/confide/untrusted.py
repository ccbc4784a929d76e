"""Reading untrusted input: files given by users and text sent back by models.

Every loader reads through `read_text` / `load_json` / `load_yaml`, and every model
reply that should be JSON goes through `parse_json`, so one set of rules holds
everywhere and each failure is one `InputError` naming the file (and line) and what is
wrong, never a traceback:

- a file is read with a size limit (a directory, a device such as /dev/zero, or an
  oversized file is refused before it is read);
- bytes must be UTF-8 (the error gives the offset and line of the first bad byte);
- YAML may use at most `MAX_ALIASES` aliases and expand to at most `MAX_YAML_NODES`
  values, checked on the composed document before it is constructed or walked;
- JSON and YAML may nest at most `MAX_DEPTH` levels (deeper input would overflow the
  parser's recursion or, later, pydantic's serializer) and may not hold lone surrogates
  (`"\\ud800"` decodes to a code point no UTF-8 writer can encode, so it would break the
  first trace or cache write that met it).

Text that can hold a lone surrogate without being parsed (a completion's text, a prompt
from the command line) is passed through `scrub`, which replaces each one with U+FFFD.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from confide.errors import ConfideError

MAX_DEPTH = 100
"""Deepest nesting accepted in JSON/YAML (confide's own files nest about 8 levels)."""
MAX_BYTES = 512 * 2**20
"""Largest file read (traces of long conversations reach tens of megabytes)."""
MAX_ALIASES = 10_000
"""Most YAML aliases (`*name`) read from one document (confide's own files use none)."""
MAX_YAML_NODES = 1_000_000
"""Most values a YAML document may expand to once its aliases are followed."""
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


class InputError(ConfideError):
    """A file or text could not be read, decoded or parsed; the message says where."""


def lone_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate in `text` (a Python str holds a valid pair as
    one code point, so any surrogate code unit in it is lone), or None."""
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def scrub(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it can be written."""
    return text if lone_surrogate(text) is None else _SURROGATE.sub(REPLACEMENT, text)


def read_bytes(path: Path | str, what: str = "file", *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file (or pipe) of at most `limit` bytes."""
    path = Path(path)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{what} {path} is a directory, not a file")
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise InputError(f"{what} {path} is not a regular file")
        if info.st_size > limit:
            raise InputError(f"{what} {path} is {info.st_size} bytes; the limit is {limit}")
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{what} {path} is larger than the limit of {limit} bytes")
    return data


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of `data`; the error names the first bad byte and its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{source}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start})"
        ) from None


def read_text(path: Path | str, what: str = "file", *, limit: int = MAX_BYTES) -> str:
    """A UTF-8 text file, read with a size limit."""
    return decode(read_bytes(path, what, limit=limit), str(path))


def parse_json(text: str, source: str, *, line: int | None = None) -> Any:
    """JSON from text; InputError with line and column, or naming the depth or the lone
    surrogate that makes it unusable. `line` is the line `text` came from (JSONL)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = (
            f"{source}: line {exc.lineno}, column {exc.colno}"
            if line is None
            else f"{source}:{line}: column {exc.colno}"
        )
        raise InputError(f"{where}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        where = source if line is None else f"{source}:{line}"
        raise InputError(f"{where}: JSON nested more than {MAX_DEPTH} levels deep") from None
    check_plain(value, source if line is None else f"{source}:{line}")
    return value


def parse_jsonl(text: str, source: str) -> list[tuple[int, Any]]:
    """(line number, value) for every non-blank line of JSONL text."""
    return [
        (number, parse_json(line, source, line=number))
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def parse_yaml(text: str, source: str) -> Any:
    """YAML (safe subset) from text, with the same limits as `parse_json`, and its aliases
    limited before anything walks the data (`check_aliases`)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_aliases(node, source)
        value = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:
        raise InputError(f"{source}: YAML nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # a value its constructor refuses: a 5,000-digit integer
        raise InputError(f"{source}: unreadable YAML value: {str(exc)[:200]}") from None
    finally:
        loader.dispose()
    check_plain(value, source)
    return value


def check_aliases(root: yaml.Node, source: str) -> None:
    """Raise InputError when a composed YAML document uses more than `MAX_ALIASES` aliases,
    refers to itself, or would expand to more than `MAX_YAML_NODES` nodes (a "billion
    laughs" file is a few hundred bytes whose aliases expand to 10^9 strings: every walk
    over the constructed data would take hours). The composed graph shares each anchored
    node, so its expanded size is counted once per node, in time linear in the text."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    edges = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            open_.discard(id(node))
            total = 1 + sum(size[id(child)] for child in children)
            if total > MAX_YAML_NODES:
                raise InputError(
                    f"{source}: YAML aliases expand to more than {MAX_YAML_NODES} values"
                )
            size[id(node)] = total
            continue
        if id(node) in size:
            continue
        if id(node) in open_:
            raise InputError(f"{source}: a YAML alias refers to the node that holds it")
        open_.add(id(node))
        edges += len(children)
        stack.append((node, True))
        for child in children:
            if id(child) in open_:
                raise InputError(f"{source}: a YAML alias refers to the node that holds it")
            stack.append((child, False))
    aliases = edges - (len(size) - 1)
    if aliases > MAX_ALIASES:
        raise InputError(f"{source}: {aliases} YAML aliases; at most {MAX_ALIASES} are read")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_json(path: Path | str, what: str = "file", *, limit: int = MAX_BYTES) -> Any:
    """A JSON file: read with a limit, decoded as UTF-8, parsed with the limits above."""
    return parse_json(read_text(path, what, limit=limit), str(path))


def load_yaml(path: Path | str, what: str = "file", *, limit: int = MAX_BYTES) -> Any:
    """A YAML file: read with a limit, decoded as UTF-8, parsed with the limits above."""
    return parse_yaml(read_text(path, what, limit=limit), str(path))


def check_plain(value: Any, source: str) -> None:
    """Raise InputError when parsed data nests deeper than MAX_DEPTH or holds a string
    (value or key) with a lone surrogate. Iterative, so it never recurses itself."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            at = lone_surrogate(item)
            if at is not None:
                raise InputError(
                    f"{source}: the string {item[:40]!r} holds a lone surrogate "
                    f"(\\u{ord(item[at]):04x}), which is not a character"
                )
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise InputError(f"{source}: data nested more than {MAX_DEPTH} levels deep")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
