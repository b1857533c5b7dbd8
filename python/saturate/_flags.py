"""The script's own command-line options as argparse parsed them, sent to saturate as `flags` messages
(docs/helper-protocol.md), so that tune can find the flag that sets a knob and hand back the user's own command.

Installed with the automatic instrumentation (_auto.install, when the script imports torch, in processes saturate
started; a script that never imports torch stays untouched, so one that parses its arguments before importing
torch is not recorded): argparse.ArgumentParser.parse_known_args (which parse_args calls) is wrapped, and after
the outermost call returns (a subparser's nested call is part of it) the
parser's options are sent. The cost is one call per parse; nothing runs per step. A failure of saturate's own
here never reaches the program: the parse result is returned as it was.
"""

import sys

# Values longer than this (paths, prompts) are sent as null: no knob takes them.
_MAX_TEXT = 120
_depth = 0


def install():
    """Wraps argparse's parse_known_args once per process."""
    import argparse

    cls = argparse.ArgumentParser
    original = cls.parse_known_args
    if getattr(original, "_saturate_flags", False):
        return

    def parse_known_args(parser, args=None, namespace=None):
        global _depth
        _depth += 1
        try:
            result = original(parser, args, namespace)
        finally:
            _depth -= 1
        if _depth == 0:
            try:
                report(parser, result[0], sys.argv[1:] if args is None else list(args))
            except Exception:  # the user's parse result matters more than our report
                pass
        return result

    parse_known_args._saturate_flags = True
    cls.parse_known_args = parse_known_args


def _scalar(value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str) and len(value) <= _MAX_TEXT:
        return value
    return None


def _kind(action):
    """How the option takes a value: "value" (`--x V`, `--x=V`), "store_true"/"store_false" (present or
    absent), "boolean_optional" (`--x`/`--no-x`); None for options no knob can be mapped to (counts, lists)."""
    import argparse

    if isinstance(action, argparse._StoreTrueAction):
        return "store_true"
    if isinstance(action, argparse._StoreFalseAction):
        return "store_false"
    if isinstance(action, getattr(argparse, "BooleanOptionalAction", ())):
        return "boolean_optional"
    if isinstance(action, argparse._StoreAction) and action.nargs in (None, "?"):
        return "value"
    return None


def _given(option_strings, args):
    """Whether one of the option's strings is on the command line (`--x`, `--x=V`, or a short `-jV`)."""
    for arg in args:
        if not isinstance(arg, str):
            continue
        for s in option_strings:
            if arg == s or arg.startswith(s + "=") or (len(s) == 2 and not s.startswith("--") and arg.startswith(s)):
                return True
    return False


def options(parser, namespace, args):
    """The parser's optional arguments with the values they parsed to, as `flags` message entries."""
    out = []
    for action in parser._actions:
        kind = _kind(action)
        if kind is None or not action.option_strings:
            continue
        value = getattr(namespace, action.dest, None)
        out.append({"dest": action.dest, "flags": list(action.option_strings), "kind": kind,
                    "value": _scalar(value), "default": _scalar(action.default),
                    "given": _given(action.option_strings, args)})
    return out


def report(parser, namespace, args):
    """Sends the parsed options, split over as many `flags` messages as the 4 KiB datagram limit needs."""
    from ._channel import MAX_DATAGRAM_BYTES
    from . import _STATE

    if not _STATE.channel.enabled:
        return
    entries = options(parser, namespace, args)
    chunk, size = [], 0
    for entry in entries:
        cost = len(repr(entry)) + 8
        if chunk and size + cost > MAX_DATAGRAM_BYTES // 2:
            _STATE.channel.send("flags", {"parser": "argparse", "options": chunk}, patient=True)
            chunk, size = [], 0
        chunk.append(entry)
        size += cost
    if chunk or not entries:
        _STATE.channel.send("flags", {"parser": "argparse", "options": chunk}, patient=True)
