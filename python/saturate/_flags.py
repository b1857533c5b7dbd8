"""The script's own command-line options as argparse or click (and Typer, built on click) parsed them, sent to
saturate as `flags` messages (docs/helper-protocol.md), so that tune can find the flag that sets a knob and hand back
the user's own command.

Installed with the automatic instrumentation (_auto.install, when the script imports torch, in processes saturate
started; a script that never imports torch stays untouched, so one that parses its arguments before importing
torch is not recorded): argparse.ArgumentParser.parse_known_args (which parse_args calls) is wrapped, and after
the outermost call returns (a subparser's nested call is part of it) the
parser's options are sent. Where click is installed, click.Command.parse_args is wrapped the same way: after a
command parses its arguments, its options are sent with click's own record of where each value came from (the
command line or a default). A group's subcommand is a command of its own: each sends its options. The cost is one call per parse; nothing runs per step. A failure of saturate's own
here never reaches the program: the parse result is returned as it was.
"""

import sys

# Values longer than this (paths, prompts) are sent as null: no knob takes them.
_MAX_TEXT = 120
_depth = 0


def install():
    """Wraps argparse's parse_known_args, and click's Command.parse_args where click is installed, once per
    process."""
    _install_click()
    import argparse

    def wrap(original):
        def parse_known_args(parser, args=None, namespace=None):
            global _depth
            _depth += 1
            try:
                result = original(parser, args, namespace)
            finally:
                _depth -= 1
            if _depth == 0:
                _send("argparse", lambda: options(parser, result[0], sys.argv[1:] if args is None else list(args)))
            return result
        return parse_known_args

    _patch_once(argparse.ArgumentParser, "parse_known_args", wrap)


def _patch_once(cls, name, wrap):
    """Replaces cls.name with wrap(cls.name) unless it is ours already."""
    original = getattr(cls, name)
    if getattr(original, "_saturate_flags", False):
        return
    patched = wrap(original)
    patched._saturate_flags = True
    setattr(cls, name, patched)


def _send(parser_name, entries):
    """report(parser_name, entries()) with secrets hidden, where a failure of ours never reaches the program's
    parse."""
    try:
        report(parser_name, [_hide_secret(e) for e in entries()])
    except Exception:  # the user's parse result matters more than our report
        pass


_SECRET_WORDS = ("key", "token", "secret", "password")


def _hide_secret(entry):
    """An option named for a secret (--api-key, --hf-token) is sent with its value and default as "***" (saturate's
    redaction rule, src/util/redact.h): tune writes options to results.json and its cache."""
    names = [entry.get("dest") or ""] + list(entry.get("flags") or [])
    if any(word in str(name).lower() for name in names for word in _SECRET_WORDS):
        entry = dict(entry)
        for field in ("value", "default"):
            if entry.get(field) is not None:
                entry[field] = "***"
    return entry


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


def _install_click():
    """Wraps click.Command.parse_args where click can be imported (a script that uses click imports it anyway)."""
    import importlib.util

    try:
        if "click" not in sys.modules and importlib.util.find_spec("click") is None:
            return
        import click.core
    except Exception:  # a broken click install is the script's to find, not ours
        return
    def wrap(original):
        def parse_args(command, ctx, args):
            given_args = list(args)
            result = original(command, ctx, args)
            _send("click", lambda: click_options(command, ctx, given_args))
            return result
        return parse_args

    _patch_once(click.core.Command, "parse_args", wrap)


def _click_kind(param):
    """click's option as one of _kind's forms; None for what no knob maps to (counts, lists, tuples, a flag pair
    whose negative is not `--no-...`)."""
    if getattr(param, "count", False) or getattr(param, "multiple", False) or param.nargs != 1:
        return None
    if getattr(param, "is_flag", False):
        if param.secondary_opts:
            return "boolean_optional" if all(s.startswith("--no-") for s in param.secondary_opts) else None
        if param.flag_value is True:
            return "store_true"
        if param.flag_value is False:
            return "store_false"
        return None
    return "value"


def click_options(command, ctx, args):
    """The command's options with the values they parsed to, as `flags` message entries."""
    import click

    source_of = getattr(ctx, "get_parameter_source", None)
    out = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or not param.opts:
            continue
        kind = _click_kind(param)
        if kind is None:
            continue
        strings = list(param.opts) + list(param.secondary_opts)
        if source_of is not None:
            source = source_of(param.name)
            given = source is not None and source.name == "COMMANDLINE"
        else:
            given = _given(strings, args)
        default = param.default() if callable(param.default) else param.default
        out.append({"dest": param.name, "flags": strings, "kind": kind, "value": _scalar(ctx.params.get(param.name)),
                    "default": _scalar(default), "given": given})
    return out


def report(parser_name, entries):
    """Sends the parsed options, split over as many `flags` messages as the 4 KiB datagram limit needs."""
    from ._channel import MAX_DATAGRAM_BYTES
    from . import _STATE

    if not _STATE.channel.enabled:
        return
    chunk, size = [], 0
    for entry in entries:
        cost = len(repr(entry)) + 8
        if chunk and size + cost > MAX_DATAGRAM_BYTES // 2:
            _STATE.channel.send("flags", {"parser": parser_name, "options": chunk}, patient=True)
            chunk, size = [], 0
        chunk.append(entry)
        size += cost
    if chunk or not entries:
        _STATE.channel.send("flags", {"parser": parser_name, "options": chunk}, patient=True)
