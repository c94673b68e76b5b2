"""What already computes each thing the course's exercises ask the learner to write.

One :class:`~attnlib.checks._calls.Forbidden` per idea, with every name that reaches it: torch's
functions, tensor methods, ``torch.ops`` operators and ATen kernels, scipy's and numpy's
equivalents where they exist, and attnlib's own functions, their unchecked inner versions
included. An exercise names the ideas it forbids (``SOFTMAX | LOG_SOFTMAX``) in its checker's
module; lists that only one exercise needs (its masks, its sampler) stay in that module.

An ATen kernel goes in ``ops`` only where names cannot see enough and no allowed work runs it:
the dot product's ``aten.dot`` also runs for ``a @ b``, and torch's attention is seen by name
only (on a check's float64 tensors it runs its math path, matmuls and a softmax, which are the
learner's to use; and each operator the watch sees costs the check about 20 µs).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib.attention import attend, attend_fused
from attnlib.checks._calls import Forbidden
from attnlib.softmax import softmax_unchecked

SOFTMAX = Forbidden(
    python={
        attnlib.softmax: "attnlib.softmax",
        softmax_unchecked: "attnlib.softmax.softmax_unchecked",
        attnlib.naive_softmax: "attnlib.naive_softmax",
        attnlib.online_softmax: "attnlib.online_softmax",
        attnlib.online_softmax_step: "attnlib.online_softmax_step",
        attnlib.next_token_probs: "attnlib.next_token_probs",
    },
    torch={
        "softmax": "torch's softmax",
        "_softmax": "torch's softmax",
        "special_softmax": "torch.special.softmax",
        "_safe_softmax": "torch._safe_softmax",
        "_masked_softmax": "torch._masked_softmax",
    },
    ops={
        "_softmax": "torch's softmax (aten._softmax)",
        "_safe_softmax": "torch's softmax (aten._safe_softmax)",
        "_masked_softmax": "torch's softmax (aten._masked_softmax)",
    },
    paths={
        "attnlib.softmax:_exp_over_sum": "attnlib's softmax (attnlib.softmax._exp_over_sum)",
        "attnlib.sampling:_next_token_probs": "attnlib.next_token_probs",
        "scipy.special:softmax": "scipy.special.softmax",
    },
)

LOG_SOFTMAX = Forbidden(
    torch={
        "log_softmax": "torch's log_softmax",
        "_log_softmax": "torch's log_softmax",
        "special_log_softmax": "torch.special.log_softmax",
    },
    ops={"_log_softmax": "torch's log_softmax (aten._log_softmax)"},
    paths={"scipy.special:log_softmax": "scipy.special.log_softmax"},
)

# log Σ eˣ, shifted by the maximum inside: the stable softmax's denominator.
LOGSUMEXP = Forbidden(
    torch={
        "logsumexp": "torch.logsumexp",
        "special_logsumexp": "torch.special.logsumexp",
        "logcumsumexp": "torch.logcumsumexp",
    },
    ops={
        "logsumexp": "torch.logsumexp (aten.logsumexp)",
        "logcumsumexp": "torch.logcumsumexp (aten.logcumsumexp)",
    },
    paths={"scipy.special:logsumexp": "scipy.special.logsumexp"},
)

# The gradient softmax passes back, Jᵀg: log_softmax's backward gives it too, for g·p.
SOFTMAX_GRADIENT = Forbidden(
    python={attnlib.softmax_jacobian: "attnlib.softmax_jacobian"},
    torch={
        "_softmax_backward_data": "torch's softmax backward",
        "_log_softmax_backward_data": "torch's log_softmax backward",
    },
    ops={
        "_softmax_backward_data": "torch's softmax backward (aten._softmax_backward_data)",
        "_log_softmax_backward_data": (
            "torch's log_softmax backward (aten._log_softmax_backward_data)"
        ),
    },
)

# Every way of letting autograd differentiate: reverse mode ends in the engine's run_backward,
# forward mode in _make_dual; the functions named here are what a learner types.
AUTOGRAD = Forbidden(
    python={
        torch.autograd.grad: "torch.autograd.grad",
        torch.autograd.backward: "torch.autograd.backward",
        torch.Tensor.backward: "Tensor.backward",
        torch.autograd.functional.jacobian: "torch.autograd.functional.jacobian",
        torch.autograd.functional.vjp: "torch.autograd.functional.vjp",
        torch.autograd.functional.jvp: "torch.autograd.functional.jvp",
        torch.autograd.functional.hessian: "torch.autograd.functional.hessian",
        torch.autograd.functional.vhp: "torch.autograd.functional.vhp",
        torch.autograd.functional.hvp: "torch.autograd.functional.hvp",
        torch.autograd.forward_ad.make_dual: "torch.autograd.forward_ad.make_dual",
        torch.func.grad: "torch.func.grad",
        torch.func.grad_and_value: "torch.func.grad_and_value",
        torch.func.vjp: "torch.func.vjp",
        torch.func.jvp: "torch.func.jvp",
        torch.func.jacrev: "torch.func.jacrev",
        torch.func.jacfwd: "torch.func.jacfwd",
        torch.func.hessian: "torch.func.hessian",
        torch.func.linearize: "torch.func.linearize",
    },
    torch={
        "run_backward": "torch's autograd engine (backward)",
        "_make_dual": "torch's forward-mode autograd (make_dual)",
    },
)

# Σ aᵢbᵢ along the last dimension. (No ATen kernel: `a @ b` of two vectors runs aten.dot.)
DOT_PRODUCT = Forbidden(
    python={attnlib.dot: "attnlib.dot"},
    torch={
        "dot": "torch.dot",
        "vdot": "torch.vdot",
        "inner": "torch.inner",
        "linalg_vecdot": "torch.linalg.vecdot",
    },
    paths={"numpy.linalg:vecdot": "numpy.linalg.vecdot"},
)

COSINE_SIMILARITY = Forbidden(
    python={
        attnlib.cosine_similarity: "attnlib.cosine_similarity",
        nn.CosineSimilarity: "nn.CosineSimilarity",
    },
    torch={
        "cosine_similarity": "torch's cosine_similarity",
        "cosine_embedding_loss": "torch's cosine_embedding_loss (1 − the cosine)",
    },
    paths={
        "scipy.spatial.distance:cosine": "scipy.spatial.distance.cosine",
        "sklearn.metrics.pairwise:cosine_similarity": (
            "sklearn.metrics.pairwise.cosine_similarity"
        ),
        "sentence_transformers.util:cos_sim": "sentence_transformers.util.cos_sim",
    },
)

# −log p(target) from logits, as one call.
CROSS_ENTROPY = Forbidden(
    python={
        F.cross_entropy: "F.cross_entropy",
        nn.CrossEntropyLoss: "nn.CrossEntropyLoss",
        attnlib.label_smoothed_cross_entropy: "attnlib.label_smoothed_cross_entropy",
    },
    torch={"cross_entropy_loss": "F.cross_entropy"},
)

# −log p(target) from log-probabilities. Its kernels run in every cross-entropy too.
NLL_LOSS = Forbidden(
    python={F.nll_loss: "F.nll_loss", nn.NLLLoss: "nn.NLLLoss"},
    torch={"nll_loss": "F.nll_loss", "nll_loss_nd": "F.nll_loss", "nll_loss2d": "F.nll_loss"},
    ops={
        "nll_loss_forward": "torch's nll_loss (aten.nll_loss_forward)",
        "nll_loss2d_forward": "torch's nll_loss (aten.nll_loss2d_forward)",
    },
)

# (x − mean) / √(var + ε), per position. A batch or group norm of the right view, or an RMS
# norm of the centred x, is the same computation.
LAYER_NORM = Forbidden(
    python={
        F.layer_norm: "torch.nn.functional.layer_norm",
        nn.LayerNorm: "torch.nn.LayerNorm",
        F.group_norm: "torch.nn.functional.group_norm",
        nn.GroupNorm: "torch.nn.GroupNorm",
        F.instance_norm: "torch.nn.functional.instance_norm",
        F.batch_norm: "torch.nn.functional.batch_norm",
        F.rms_norm: "torch.nn.functional.rms_norm",
        nn.RMSNorm: "torch.nn.RMSNorm",
    },
    torch={
        "layer_norm": "torch.layer_norm",
        "native_layer_norm": "torch.native_layer_norm",
        "group_norm": "torch.group_norm",
        "native_group_norm": "torch.native_group_norm",
        "instance_norm": "torch.instance_norm",
        "batch_norm": "torch.batch_norm",
        "native_batch_norm": "torch.native_batch_norm",
        "_native_batch_norm_legit": "torch's batch_norm",
        "_native_batch_norm_legit_no_training": "torch's batch_norm",
        "_batch_norm_with_update": "torch's batch_norm",
        "_batch_norm_no_update": "torch's batch_norm",
        "rms_norm": "torch.rms_norm",
        "_fused_rms_norm": "torch's rms_norm",
    },
    ops={
        "native_layer_norm": "torch's layer_norm (aten.native_layer_norm)",
        "native_group_norm": "torch's group_norm (aten.native_group_norm)",
        "native_batch_norm": "torch's batch_norm (aten.native_batch_norm)",
        "_native_batch_norm_legit": "torch's batch_norm (aten._native_batch_norm_legit)",
        "_native_batch_norm_legit_no_training": (
            "torch's batch_norm (aten._native_batch_norm_legit_no_training)"
        ),
        "_batch_norm_with_update": "torch's batch_norm (aten._batch_norm_with_update)",
        "_batch_norm_no_update": "torch's batch_norm (aten._batch_norm_no_update)",
        "_fused_rms_norm": "torch's rms_norm (aten._fused_rms_norm)",
    },
    paths={"scipy.stats:zscore": "scipy.stats.zscore"},
)

# torch's softmax(q kᵀ / √d_k) v in one call, and the fused kernels it picks, by name.
_FUSED_ATTENTION = tuple(
    f"_scaled_dot_product_{kernel}"
    for kernel in (
        "flash_attention_for_cpu",
        "flash_attention",
        "efficient_attention",
        "cudnn_attention",
        "fused_attention_overrideable",
    )
)
TORCH_ATTENTION = Forbidden(
    torch={
        "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
        "_scaled_dot_product_attention_math": "torch's scaled dot-product attention",
        **{name: "torch's scaled dot-product attention" for name in _FUSED_ATTENTION},
    },
)

# softmax(q kᵀ / √d_k) v: torch's, and attnlib's functions with their unchecked inner versions.
ATTENTION = TORCH_ATTENTION | Forbidden(
    python={
        attnlib.scaled_dot_product_attention: "attnlib.scaled_dot_product_attention",
        attend: "attnlib.attention.attend",
        attnlib.fused_attention: "attnlib.fused_attention",
        attend_fused: "attnlib.attention.attend_fused",
        attnlib.tiled_attention: "attnlib.tiled_attention",
    },
)

# Modules (and functions) that compute a whole attention head or several, projections included.
ATTENTION_MODULES = Forbidden(
    python={
        attnlib.AttentionHead: "attnlib.AttentionHead",
        attnlib.SelfAttention: "attnlib.SelfAttention",
        attnlib.MultiHeadAttention: "attnlib.MultiHeadAttention",
        nn.MultiheadAttention: "torch.nn.MultiheadAttention",
        F.multi_head_attention_forward: "torch.nn.functional.multi_head_attention_forward",
    },
    torch={"_native_multi_head_attention": "torch's multi-head attention"},
    paths={
        f"transformers.models.bert.modeling_bert:{name}": f"transformers' {name}"
        for name in ("BertSelfAttention", "BertAttention", "eager_attention_forward")
    }
    | {"transformers.integrations.sdpa_attention:sdpa_attention_forward": "transformers' sdpa"},
)
