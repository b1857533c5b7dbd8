"""The FLOPs of one training step (forward + backward), counted once, during the first training step, for
model FLOPs utilisation (docs/helper-protocol.md, the `flops` message).

Two ways, the best the torch at hand has:
  flop_counter   torch.utils.flop_counter.FlopCounterMode (torch 2.1 and later): every matrix product,
                 convolution and attention operator the step runs, forward and backward, as they ran;
  module_hooks   torch 1.13: a global forward hook counts what nn.Linear, nn.Conv1d/2d/3d,
                 nn.ConvTranspose1d/2d/3d and nn.MultiheadAttention compute, from their shapes, in calls with
                 gradients enabled; forward + backward is 3 x forward (each product's backward computes two
                 products of the same size: the gradients of its input and of its weight). Products called as
                 functions (torch.matmul, F.linear) are not seen: the count is then a lower bound.
A multiply-add is 2 FLOPs, as FlopCounterMode counts it. The module hook also runs under flop_counter: it tells
the dtype the products ran in (autocast's, or the parameters') and whether convolutions or matrix products
dominate, which decides whether TF32 applies to an fp32 run on a GPU.

Never imports torch: the caller passes the module it already has. Nothing here raises into the training loop.
"""

import math

_DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float64": "fp64"}


def linear_flops(in_features, output_numel):
    """nn.Linear: one multiply-add per input feature for every output element."""
    return 2 * in_features * output_numel


def conv_flops(module, input_numel, output_numel):
    """nn.ConvNd: each output element is a dot product over (in_channels / groups) x kernel positions; a
    transposed convolution scatters each input element over (out_channels / groups) x kernel positions."""
    kernel = math.prod(module.kernel_size)
    if module.transposed:
        return 2 * input_numel * (module.out_channels // module.groups) * kernel
    return 2 * output_numel * (module.in_channels // module.groups) * kernel


def attention_flops(module, query, key):
    """nn.MultiheadAttention: the query, key, value and output projections, plus the two products of attention
    (scores = Q K^T and scores V), over every batch and head (the heads split the embedding, so they add up to
    one product of the full width)."""
    embed = module.embed_dim
    q_tokens = query.numel() // embed
    k_tokens = key.numel() // module.kdim
    if query.dim() == 3:
        batch = query.shape[0] if getattr(module, "batch_first", False) else query.shape[1]
    else:
        batch = 1
    projections = 2 * q_tokens * embed * embed * 2 + 2 * k_tokens * (module.kdim + module.vdim) * embed
    attention = 2 * 2 * q_tokens * (k_tokens // max(1, batch)) * embed
    return projections + attention


def _flop_counter_mode(torch):
    """torch.utils.flop_counter.FlopCounterMode where this torch has it (2.1 and later), else None."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except Exception:
        return None
    return FlopCounterMode


class FlopCount:
    """One count over the code between begin() and end(). Not thread-safe; begin and end on the training thread."""

    def __init__(self, torch):
        self.torch = torch
        self.hook = None
        self.counter = None  # an entered FlopCounterMode
        self.forward = 0  # module hooks: forward FLOPs
        self.by_kind = {"matmul": 0, "conv": 0}
        self.by_dtype = {}
        self.device = None

    def begin(self):
        torch = self.torch
        nn = torch.nn
        self._linear = nn.Linear
        self._conv = nn.modules.conv._ConvNd
        self._attention = nn.MultiheadAttention
        register = getattr(nn.modules.module, "register_module_forward_hook", None)
        if register is not None:
            self.hook = register(self._on_forward)
        mode = _flop_counter_mode(torch)
        if mode is not None:
            try:
                counter = mode(display=False)
                counter.__enter__()
                self.counter = counter
            except Exception:
                self.counter = None

    def end(self, samples):
        """Stops counting. Returns the `flops` message's fields, or None when nothing was counted."""
        total = None
        if self.counter is not None:
            try:
                self.counter.__exit__(None, None, None)
                total = int(self.counter.get_total_flops())
            except Exception:
                total = None
            self.counter = None
        if self.hook is not None:
            self.hook.remove()
            self.hook = None
        if total:
            per_step, method = total, "flop_counter"
        elif self.forward:
            per_step, method = 3 * self.forward, "module_hooks"
        else:
            return None
        samples = samples if samples and samples > 0 else 1
        dtype = max(self.by_dtype, key=self.by_dtype.get) if self.by_dtype else "fp32"
        return {"per_step": per_step, "per_sample": per_step / samples, "samples": samples, "method": method,
                "dtype": dtype, "tf32": self._tf32(dtype), "device": self.device or "cpu"}

    def _tf32(self, dtype):
        """Whether an fp32 step on a GPU may run its dominant work (convolutions or matrix products) on TF32
        tensor cores, as torch's switches allow it."""
        if dtype != "fp32" or self.device != "cuda":
            return False
        backends = self.torch.backends
        try:
            if self.by_kind["conv"] >= self.by_kind["matmul"]:
                return bool(backends.cudnn.allow_tf32)
            return bool(backends.cuda.matmul.allow_tf32)
        except Exception:
            return False

    def _on_forward(self, module, inputs, output):
        if not self.torch.is_grad_enabled():
            return None
        try:
            flops, kind, out = self._module_flops(module, inputs, output)
        except Exception:  # an unusual module or input layout: not counted
            return None
        if not flops:
            return None
        self.forward += flops
        self.by_kind[kind] += flops
        name = _DTYPES.get(str(getattr(out, "dtype", "")), str(getattr(out, "dtype", "fp32")))
        self.by_dtype[name] = self.by_dtype.get(name, 0) + flops
        device = getattr(getattr(out, "device", None), "type", None)
        if device is not None and self.device != "cuda":
            self.device = device
        return None

    def _module_flops(self, module, inputs, output):
        """(forward FLOPs, "matmul" or "conv", the output tensor) of one call of a counted module type."""
        if isinstance(module, self._linear):
            return linear_flops(module.in_features, output.numel()), "matmul", output
        if isinstance(module, self._conv):
            return conv_flops(module, inputs[0].numel(), output.numel()), "conv", output
        if isinstance(module, self._attention):
            out = output[0] if isinstance(output, tuple) else output
            return attention_flops(module, inputs[0], inputs[1]), "matmul", out
        return 0, None, None
