"""Looking inside a batch without knowing its type: how many samples it holds, and moving it to a device.

Works on torch tensors, numpy arrays and anything else with a `shape`, nested in tuples, lists and dicts.
Never imports torch: tensors are recognised by the `shape` attribute, and moved only if torch is loaded.
"""

import collections
import collections.abc
import sys

# Deeper nesting than this is not a batch layout anyone uses; stop instead of recursing into cycles.
_MAX_DEPTH = 8
# Values that are never containers, checked first because the Mapping check is slow (per step, per element).
_LEAVES = (str, bytes, int, float, type(None))


def _array_len(obj):
    """First dimension of a tensor or array (anything with a non-empty `shape`), else None."""
    shape = getattr(obj, "shape", None)
    if shape is None:
        return None
    try:
        return int(shape[0]) if len(shape) >= 1 else None
    except (TypeError, ValueError):
        return None


def _list_len(obj):
    return len(obj) if isinstance(obj, list) else None


def _search(obj, probe, into_lists, depth=0):
    """The first non-None probe(x) over `obj` and its nested values, depth-first; tuples and mappings are always
    searched, lists only when `into_lists`."""
    found = probe(obj)
    if found is not None or depth >= _MAX_DEPTH or isinstance(obj, _LEAVES):
        return found
    if isinstance(obj, tuple) or (into_lists and isinstance(obj, list)):
        items = obj
    elif isinstance(obj, dict) or (not isinstance(obj, list) and isinstance(obj, collections.abc.Mapping)):
        items = obj.values()
    else:
        return None
    for item in items:
        found = _search(item, probe, into_lists, depth + 1)
        if found is not None:
            return found
    return None


def count_samples(batch):
    """Samples in `batch`: the first dimension of the first tensor/array found depth-first; failing that, the
    length of the first list (a list is a sequence of samples, while tuples and dicts group fields); failing
    that, 1 (the loader yields single samples)."""
    # Fast paths for the common layouts, with the same answer as the search below: the first field of (inputs,
    # targets), of a dict or of a mapping (a tokenizer's output) is usually the tensor that counts.
    kind = type(batch)
    if kind is tuple or kind is list:
        first = batch[0] if batch else None
    elif kind is dict:
        first = next(iter(batch.values()), None)
    elif isinstance(batch, collections.UserDict):  # transformers' BatchEncoding: its fields are in .data
        first = next(iter(batch.data.values()), None)
    elif isinstance(batch, collections.abc.Mapping):
        first = next(iter(batch.values()), None)
    else:
        first = None
    shape = getattr(first, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    found = _search(batch, _array_len, into_lists=True)
    if found is None:
        found = _search(batch, _list_len, into_lists=False)
    return 1 if found is None else found


def sample_counter(samples):
    """The per-batch counting function for track(samples=...): None (look inside), an int, or a callable."""
    if samples is None:
        return count_samples
    if callable(samples):
        return lambda batch: int(samples(batch))
    if isinstance(samples, int) and not isinstance(samples, bool) and samples >= 0:
        fixed = samples
        return lambda batch: fixed
    raise TypeError("samples must be None, a non-negative int or a callable, not %r" % (samples,))


def default_device(requested):
    """The compute-mode device: `requested` (SATURATE_DEVICE) if set, else cuda when torch sees a GPU, else cpu."""
    if requested:
        return requested
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            if torch.cuda.is_initialized():
                return "cuda:%d" % torch.cuda.current_device()
            return "cuda:0"
    except Exception:  # a torch built without CUDA support, or a broken driver
        pass
    return "cpu"


def to_device(batch, device):
    """A copy of `batch` with every torch tensor moved to `device`; containers are rebuilt with their own type
    where possible, everything else is returned as is. Without torch loaded, returns `batch` unchanged."""
    torch = sys.modules.get("torch")
    if torch is None:
        return batch
    return _move(batch, torch.device(device), torch.Tensor, 0)


def _move(obj, device, tensor_type, depth):
    if isinstance(obj, tensor_type):
        return obj.to(device)
    if depth >= _MAX_DEPTH:
        return obj
    if isinstance(obj, tuple):
        moved = [_move(item, device, tensor_type, depth + 1) for item in obj]
        return type(obj)(*moved) if hasattr(obj, "_fields") else type(obj)(moved)
    if isinstance(obj, list):
        return [_move(item, device, tensor_type, depth + 1) for item in obj]
    if isinstance(obj, collections.abc.Mapping):
        moved = [(key, _move(value, device, tensor_type, depth + 1)) for key, value in obj.items()]
        try:
            return type(obj)(moved)
        except Exception:  # a mapping type that cannot be built from pairs
            return dict(moved)
    return obj
