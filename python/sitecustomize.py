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


def _is_helper_folder(path):
    """Whether `path` is a saturate helper folder: this one, or another install's (saturate run inside saturate,
    two versions on PYTHONPATH). Their sitecustomize would chain back here, round and round."""
    folder = _os.path.abspath(path or _os.curdir)
    return folder == _HERE or (_os.path.isfile(_os.path.join(folder, "sitecustomize.py")) and
                               _os.path.isfile(_os.path.join(folder, "saturate", "_auto.py")))


def _chain_to_shadowed():
    """Runs the first `sitecustomize` on sys.path that is not saturate's, under that name, as site.py would
    have."""
    import importlib.machinery
    import importlib.util

    rest = [p for p in _sys.path if not _is_helper_folder(p)]
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
    """A meta path finder that waits for `torch` and arranges for saturate to patch it as soon as torch's own
    __init__ has run, whichever way the import comes: `import torch`, `importlib.import_module`, `__import__`, a
    `find_spec("torch")` first (transformers' is_torch_available) or a lazy loader. It finds nothing itself: the
    spec comes from the finders after it, with its loader's exec_module wrapped. It leaves sys.meta_path only once
    torch is instrumented, so a look-up that imports nothing does not end the wait. Until then, any other import
    that finds torch already in sys.modules (brought in by a finder ahead of this one) attaches late: the first
    chance there is. Threads: the import lock serialises finders per module; `_busy` guards re-entry."""

    def __init__(self):
        self._busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            torch = _sys.modules.get("torch")
            if torch is not None and _ready(torch):
                _attach(torch)
            return None
        if self._busy:
            return None
        self._busy = True
        try:
            spec = _spec_from_later_finders(self, name, path, target)
        finally:
            self._busy = False
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_patch(module):
            exec_module(module)
            _attach(module)

        exec_then_patch.saturate_pending = True  # _ready: this import attaches when torch's __init__ is done

        # The loader object is this spec's own (a fresh one per lookup), so only torch's import is affected.
        try:
            loader.exec_module = exec_then_patch
        except (AttributeError, TypeError):  # a loader that refuses attributes: the late attach still holds
            pass
        return spec


def _spec_from_later_finders(hook, name, path, target):
    """What the import system would find for `name` without `hook`: the first spec of the finders after it."""
    for finder in list(_sys.meta_path):
        if finder is hook:
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec
    return None


def _initializing(module):
    """True while a module's own top-level code is still running (importlib marks its spec so)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _ready(torch):
    """torch is in sys.modules with its __init__ done, and no import through this hook will attach later: not
    a lazy module yet to load (importlib.util.LazyLoader), nor one whose own exec_module is still running."""
    if _initializing(torch) or type(torch).__name__ == "_LazyModule":
        return False
    loader = getattr(getattr(torch, "__spec__", None), "loader", None)
    return not getattr(getattr(loader, "exec_module", None), "saturate_pending", False)


_HOOK = None
_ATTACHED = False


def _attach(torch):
    """Instruments `torch` once, and takes the import hook off sys.meta_path."""
    global _ATTACHED
    if _ATTACHED:
        return
    _ATTACHED = True
    if _HOOK is not None:
        try:
            _sys.meta_path.remove(_HOOK)
        except ValueError:
            pass
    _instrument(torch)


def _instrument(torch):
    try:
        from saturate import _auto

        _auto.install(torch)
    except Exception as e:
        _off("%s: %s" % (type(e).__name__, e))


def _off(reason):
    # probe reads this prefix from stderr to say why nothing was measured (src/core/stage.cc, AutoFailureLine).
    print("saturate: automatic instrumentation is off for this run: %s" % reason, file=_sys.stderr)


def _check_at_exit():
    """Never silently not at all: a process that imported torch without the instrumentation attaching says so."""
    torch = _sys.modules.get("torch")
    if _ATTACHED or torch is None or not _ready(torch):
        return
    _off("torch was imported (%s) without passing saturate's import hook or any later import "
         "(sys.meta_path: %s)" % (getattr(torch, "__file__", "?"),
                                  ", ".join(type(f).__name__ for f in _sys.meta_path)[:200]))


def _watch_files():
    """The data files this process opens, reported over the channel (saturate/_files.py), loaded by its path so
    that the saturate package is imported only once there is something to send."""
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("saturate._files",
                                                      _os.path.join(_HERE, "saturate", "_files.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.install()
        _sys.modules[spec.name] = module
    except Exception as e:  # an earlier audit hook may refuse new ones: the run goes on without the watch
        print("saturate: the data-file watch is off for this run: %s: %s" % (type(e).__name__, e), file=_sys.stderr)


_chain_to_shadowed()
# The files a run reads: wherever there is a channel, with or without the automatic instrumentation (it measures no
# throughput and changes nothing the script sees).
if _os.environ.get("SATURATE_CHANNEL"):
    _watch_files()
# Only a process saturate started has somewhere to report or knobs to apply.
_wanted = _os.environ.get("SATURATE_CHANNEL") or _os.environ.get("SATURATE_KNOBS")
if _wanted and _os.environ.get("SATURATE_AUTO", "1") != "0":
    import atexit as _atexit

    _atexit.register(_check_at_exit)
    if "torch" in _sys.modules:  # imported before this ran: a .pth file, the chained sitecustomize
        _attach(_sys.modules["torch"])
    else:
        _HOOK = _TorchImportHook()
        _sys.meta_path.insert(0, _HOOK)
