"""How closely attnlib's attention matches PyTorch's: `python -m benchmarks.equivalence`.

Prints the largest absolute difference between attnlib and the PyTorch reference
over a grid of shapes and boolean masks, per dtype, for attnlib's three attention
functions, `scaled_dot_product_attention` (the math), `tiled_attention` (online
softmax over tiles of 16, so that every shape spans several) and `fused_attention`
(PyTorch's kernel under attnlib's conventions), each against
`torch.nn.functional.scaled_dot_product_attention`, and for
`MultiHeadAttention.from_torch` (vs `torch.nn.MultiheadAttention`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from benchmarks import command_line, results

SHAPES = [  # (batch dims, T_q, T_k, d_k, d_v)
    ((), 3, 3, 4, 4),
    ((2,), 5, 7, 8, 3),
    ((2, 4), 16, 16, 32, 32),
    ((3, 2), 1, 9, 6, 6),
    ((2, 8), 64, 128, 64, 64),
]
MASKS = ["none", "causal", "padding", "random", "with empty rows"]


def _mask(
    kind: str, batch: tuple[int, ...], t_q: int, t_k: int, g: torch.Generator
) -> torch.Tensor | None:
    if kind == "none":
        return None
    if kind == "causal":
        return attnlib.causal_mask(t_q, t_k)
    if kind == "padding":
        return (torch.arange(t_k) < max(1, t_k - 2))[None, :]  # (1, T_k): the last keys are padding
    mask = torch.rand(*batch, t_q, t_k, generator=g) > 0.3
    if kind == "with empty rows":
        mask[..., 0, :] = False
    return mask


IMPLEMENTATIONS: dict[str, Callable[..., torch.Tensor]] = {
    "scaled_dot_product_attention": lambda q, k, v, mask: attnlib.scaled_dot_product_attention(
        q, k, v, mask=mask
    )[0],
    "tiled_attention": lambda q, k, v, mask: attnlib.tiled_attention(
        q, k, v, mask=mask, tile_size=16
    ),
    "fused_attention": lambda q, k, v, mask: attnlib.fused_attention(q, k, v, mask=mask),
}


def attention_differences(
    implementation: str = "scaled_dot_product_attention",
) -> dict[torch.dtype, float]:
    """Largest |attnlib - torch| per dtype over every shape and mask kind."""
    attend = IMPLEMENTATIONS[implementation]
    worst: dict[torch.dtype, float] = {}
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        g = torch.Generator().manual_seed(0)
        for (batch, t_q, t_k, d_k, d_v), kind in itertools.product(SHAPES, MASKS):
            q = torch.randn(*batch, t_q, d_k, generator=g).to(dtype)
            k = torch.randn(*batch, t_k, d_k, generator=g).to(dtype)
            v = torch.randn(*batch, t_k, d_v, generator=g).to(dtype)
            mask = _mask(kind, batch, t_q, t_k, g)
            ours = attend(q, k, v, mask)
            theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            assert not torch.isnan(ours).any()
            difference = (ours.double() - theirs.double()).abs().max().item()
            worst[dtype] = max(worst.get(dtype, 0.0), difference)
    return worst


def multi_head_differences() -> dict[str, float]:
    worst = {"outputs": 0.0, "per-head weights": 0.0}
    for (d_model, heads), bias in itertools.product([(16, 4), (64, 8), (384, 12)], [True, False]):
        torch.manual_seed(d_model + heads)
        theirs = nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True)
        ours = attnlib.MultiHeadAttention.from_torch(theirs)
        x = torch.randn(2, 10, d_model)
        padding = attnlib.padding_mask([10, 6], 10)
        causal = attnlib.causal_mask(10)
        out, weights = ours(x, mask=causal & padding)
        expected, expected_weights = theirs(
            x,
            x,
            x,
            attn_mask=attnlib.to_torch_mha_mask(causal),
            key_padding_mask=attnlib.to_torch_key_padding_mask(padding),
            average_attn_weights=False,
        )
        worst["outputs"] = max(worst["outputs"], (out - expected).abs().max().item())
        worst["per-head weights"] = max(
            worst["per-head weights"], (weights - expected_weights).abs().max().item()
        )
    return worst


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "equivalence", __doc__, writes="benchmarks/results/equivalence.json"
    )
    args = parser.parse_args(argv)
    print(f"{len(SHAPES)} shapes × {len(MASKS)} mask kinds ({', '.join(MASKS)})")
    attention = {}
    for implementation in IMPLEMENTATIONS:
        print(f"{implementation} vs torch.nn.functional.scaled_dot_product_attention")
        differences = attention_differences(implementation)
        for dtype, difference in differences.items():
            print(f"  {dtype!s:15s} max |diff| = {difference:.2e}")
        attention[implementation] = {
            str(dtype).removeprefix("torch."): difference
            for dtype, difference in differences.items()
        }
    print(
        "MultiHeadAttention.from_torch vs torch.nn.MultiheadAttention (float32, causal & padding)"
    )
    multi_head = multi_head_differences()
    for what, difference in multi_head.items():
        print(f"  {what:15s} max |diff| = {difference:.2e}")
    if args.no_save:
        return
    results.save(
        "equivalence",
        {
            "shapes": len(SHAPES),
            "masks": MASKS,
            "attention": attention,
            "multi_head_float32": multi_head,
        },
    )


if __name__ == "__main__":
    main()
