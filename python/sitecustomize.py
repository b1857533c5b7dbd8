"""saturate's automatic instrumentation, loaded by Python at start-up (docs/helper-protocol.md, "Automatic
instrumentation").

saturate puts this folder first on PYTHONPATH for every command it starts, so Python imports this module instead
of the `sitecustomize` the environment had; that one still runs, first, as it would have without saturate. Then a
post-import hook waits for `torch`: a script that never imports torch pays for one finder on sys.meta_path and
nothing else. When torch has been imported, saturate._auto patches it (DataLoader, optimizers, backward).

SATURATE_AUTO=0, or a process with neither SATURATE_CHANNEL nor SATURATE_KNOBS (not started by saturate), leaves
everything but the chaining off. Nothing here may break the user's program: any failure of
saturate's own is one line on stderr, and the program runs uninstrumented.
"""

import os as _os
import sys as _sys

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def _chain_to_shadowed():
    """Runs the next `sitecustomize` on sys.path after this folder, under that name, as site.py would have."""
    import importlib.machinery
    import importlib.util

    rest = [p for p in _sys.path if _os.path.abspath(p or _os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    _sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # site.py's own behaviour for a failing sitecustomize: say so and go on
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s" % (type(e).__name__, e),
              file=_sys.stderr)


class _TorchImportHook:
    """A meta path finder that sees the import of `torch` once, and arranges for saturate to patch it as soon as
    torch's own __init__ has run. It finds nothing itself: the spec comes from the finders after it."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        # One shot: later imports of torch (and the lookup below) must not come back here.
        try:
            _sys.meta_path.remove(self)
        except ValueError:
            pass
        import importlib.util

        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_patch(module):
            exec_module(module)
            _instrument(module)

        # The loader object is this spec's own (a fresh one per lookup), so only torch's import is affected.
        loader.exec_module = exec_then_patch
        return spec


def _instrument(torch):
    try:
        from saturate import _auto

        _auto.install(torch)
    except Exception as e:
        print("saturate: automatic instrumentation is off for this run: %s: %s" % (type(e).__name__, e),
              file=_sys.stderr)


_chain_to_shadowed()
# Only a process saturate started has somewhere to report or knobs to apply.
_wanted = _os.environ.get("SATURATE_CHANNEL") or _os.environ.get("SATURATE_KNOBS")
if _wanted and _os.environ.get("SATURATE_AUTO", "1") != "0":
    if "torch" in _sys.modules:  # imported by the chained sitecustomize itself
        _instrument(_sys.modules["torch"])
    else:
        _sys.meta_path.insert(0, _TorchImportHook())
