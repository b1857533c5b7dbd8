"""The model as the automatic instrumentation finds it during the first step (the first module called with
gradients), its samples per step from its input, and autocast injected around its forward for the amp knob."""

import functools
import weakref
# How many distinct modules the first step records when looking for the model (the model is called before its
# children, so it is among the first).
_MAX_MODULES_SEEN = 64


class Model:
    """Model discovery and autocast; mixed into _auto.Auto."""

    __slots__ = ()  # the attributes are Auto's (_auto.py)

    def amp_in_effect(self):
        if self.amp_applied:
            return self.amp_applied
        return self.script_amp or "off"

    def _on_module_call(self, module, args):
        """Global forward pre-hook, first step only: records the modules called with gradients enabled."""
        try:
            self._record_module_call(module, args)
        except Exception as e:
            self.fail("the first step's module hook", e)
        return None

    def _record_module_call(self, module, args):
        if not self.torch.is_grad_enabled():
            return None
        extras = self.state.extras
        if extras.pending and not extras.count_begun and not self.silent():
            extras.begin_count()  # the first training step's forward starts: count its FLOPs
        if len(self.modules_seen) >= _MAX_MODULES_SEEN:
            return None
        for seen, _ in self.modules_seen:
            if seen is module:
                return None
        self.modules_seen.append((module, _first_dim(args)))
        return None

    def _find_model(self):
        """The model is the module with the most parameters among those the first step called (loss modules
        and other helpers have few or none). Ends the global hook; keeps a hook on the model only if its input
        counts the samples or autocast must be injected."""
        if self.module_hook is not None:
            self.module_hook.remove()
            self.module_hook = None
        best, best_n, best_dim = None, -1, None
        compiled = self.compiled_model() if self.compiled_model is not None else None
        if compiled is not None:
            # Its calls were not seen (no hook may touch a compiled module); it is the model the script chose.
            best, best_n = compiled, sum(p.numel() for p in compiled.parameters())
        for module, dim in self.modules_seen:
            n = sum(p.numel() for p in module.parameters())
            if n > best_n:
                best, best_n, best_dim = module, n, dim
        self.modules_seen = []
        if best is None:
            if self.amp_request is not None:
                self.amp_error = "no model was called with gradients in the first step"
            return
        self.model = weakref.ref(best)
        batchnorm = getattr(getattr(self.torch.nn.modules, "batchnorm", None), "_BatchNorm", None)
        self.model_batchnorm = batchnorm is not None and any(isinstance(m, batchnorm) for m in best.modules())
        if self.current is None and best_dim:
            self.model_samples = best_dim
            best.register_forward_pre_hook(self._on_model_call)
        self._inject_amp(best)

    def _on_model_call(self, module, args):
        try:
            if self.torch.is_grad_enabled():
                self.model_samples += _first_dim(args) or 0
        except Exception as e:
            self.fail("the model's forward hook", e)

    def _inject_amp(self, model):
        """Runs the model's forward under torch.autocast when the amp knob asks for it."""
        raw = self.amp_request
        if raw is None:
            return
        choice = str(raw).strip().lower()
        if choice in ("off", "false", "no", "0", "fp32", "none"):
            return
        dtype = {"bf16": "bfloat16", "on": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16",
                 "float16": "float16", "16": "float16"}.get(choice)
        if dtype is None:
            self.amp_error = "%r is not off, bf16 or fp16" % (raw,)
            return
        if dtype == "float16" and not self.scaler:
            self.amp_error = "fp16 needs the script's own GradScaler to stay correct; not injected"
            return
        param = _first_parameter(model)
        device_type = param.device.type if param is not None else "cpu"
        auto = self
        torch = self.torch
        forward = model.forward

        @functools.wraps(forward)
        def autocast_forward(*args, **kwargs):
            if not auto.active:
                return forward(*args, **kwargs)
            # Entering autocast is saturate's doing: if it fails, the forward runs as the script wrote it. What the
            # forward itself raises is the script's, and goes through.
            try:
                context = torch.autocast(device_type, dtype=getattr(torch, dtype))
                context.__enter__()
            except Exception as e:
                auto.fail("the injected autocast", e)
                return forward(*args, **kwargs)
            auto.inside_our_autocast = True
            try:
                return forward(*args, **kwargs)
            finally:
                auto.inside_our_autocast = False
                context.__exit__(None, None, None)

        model.forward = autocast_forward
        self.amp_applied = "bf16" if dtype == "bfloat16" else "fp16"


def _first_parameter(obj):
    if obj is None:
        return None
    try:
        if hasattr(obj, "parameters"):
            return next(iter(obj.parameters()), None)
        for group in getattr(obj, "param_groups", ()):
            for p in group.get("params", ()):
                return p
    except Exception:
        return None
    return None


def _first_dim(args):
    for arg in args:
        shape = getattr(arg, "shape", None)
        if shape is not None and len(shape) >= 1:
            return int(shape[0])
    return None


def _dtype_name(dtype):
    text = str(dtype)
    if "bfloat16" in text:
        return "bf16"
    if "float16" in text:
        return "fp16"
    return None
