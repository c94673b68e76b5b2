"""The attention views' pure half (notebooks 04, 05, 10, 11): shares, rows and the neuron view.

Checked against small hand-made weights and against independent recomputations, without
a browser and without MiniLM (its own tests are in test_playground_minilm_views.py).
"""

from __future__ import annotations

import base64
import io
import math

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib.course.playgrounds import attention_drawing, attention_views, neuron_view

# Three tokens; rows are queries. Hand-made, each row summing to 1.
A = torch.tensor([[1.0, 0.0, 0.0], [0.6, 0.4, 0.0], [0.1, 0.7, 0.2]], dtype=torch.float64)


def test_the_previous_next_and_key_shares_of_a_hand_made_matrix() -> None:
    assert attention_views.previous_share(A).item() == pytest.approx((0.6 + 0.7) / 2)
    assert attention_views.next_share(A).item() == pytest.approx((0.0 + 0.0) / 2)
    assert attention_views.key_share(A, 0).item() == pytest.approx((1.0 + 0.6 + 0.1) / 3)
    assert attention_views.key_share(A, 0, first_query=1).item() == pytest.approx(0.35)
    stacked = torch.stack([A, A.flip(0)])  # (2, T, T): shares are taken per leading index
    assert attention_views.previous_share(stacked).shape == (2,)
    one = torch.ones(1, 1, dtype=torch.float64)
    assert math.isnan(attention_views.previous_share(one).item())  # one token: undefined
    assert math.isnan(attention_views.key_share(one, 0, first_query=1).item())


def test_the_same_word_share_counts_only_the_other_tokens_of_a_word_in_reach() -> None:
    words = [0, 1, 1]  # token 0 alone, tokens 1 and 2 one word
    # Queries 1 and 2 have a partner: 1 puts 0.0 on token 2, 2 puts 0.7 on token 1.
    assert attention_views.same_word_share(A, words).item() == pytest.approx((0.0 + 0.7) / 2)
    causal = attnlib.causal_mask(3)  # query 1 cannot see token 2: only query 2 is counted
    assert attention_views.same_word_share(A, words, causal).item() == pytest.approx(0.7)
    assert math.isnan(attention_views.same_word_share(A, [0, 1, 2]).item())


def _view(weights: torch.Tensor, tokens: tuple[str, ...]) -> attention_views.ModelView:
    reading = attention_views.TextReading("typed", tokens, tuple(range(len(tokens))), ())
    length = len(tokens)
    return attention_views.ModelView(
        reading=reading, weights=weights, inputs=torch.zeros(weights.shape[0], length, 4),
        mask=torch.ones(length, length, dtype=torch.bool),
        shares={"prev": attention_views.previous_share(weights)}, legend="prev: before",
    )  # fmt: skip


def test_head_row_picks_one_head_and_one_query_without_copying_the_model() -> None:
    weights = torch.rand(2, 3, 3, 3, generator=torch.Generator().manual_seed(0)).softmax(-1)
    view = _view(weights, ("a", "b", "c"))
    row = attention_views.head_row(view, layer=2, head=1, query=2)
    assert torch.equal(row.weights, weights[1, 1]) and torch.equal(row.row, weights[1, 1, 2])
    assert row.shares == {"prev": float(attention_views.previous_share(weights)[1, 1])}
    assert row.tokens == ("a", "b", "c") and row.legend == "prev: before"
    for kwargs, message in [
        ({"layer": 0, "head": 0, "query": 0}, r"layer must be an int in \[1, 2\], got 0"),
        ({"layer": 1, "head": 3, "query": 0}, r"head must be an int in \[0, 2\], got 3"),
        ({"layer": 1, "head": 0, "query": True}, r"query must be an int in \[0, 2\], got True"),
    ]:
        with pytest.raises(ValueError, match=message):
            attention_views.head_row(view, **kwargs)


def test_share_titles_use_two_digits_and_a_dash_for_undefined() -> None:
    shares = {"prev": 0.973, "CLS": 1.0, "word": float("nan"), "x": 0.004}
    assert attention_views.share_title(shares) == "prev .97 CLS 1 word – x .00"


def test_record_attention_keeps_each_layers_input_and_weights_and_cleans_up() -> None:
    torch.manual_seed(0)
    layers = torch.nn.ModuleList(
        [attnlib.MultiHeadAttention(8, 2), attnlib.MultiHeadAttention(8, 2)]
    )
    x = torch.randn(1, 5, 8)
    mask = attnlib.causal_mask(5)

    def run() -> None:
        h, _ = layers[0](x, mask=mask)
        layers[1](query=h)  # given by keyword: recorded all the same

    layers.train()
    inputs, weights = attention_views.record_attention(layers, list(layers), run)
    with torch.no_grad():
        h, expected_0 = layers[0](x, mask=mask)
        _, expected_1 = layers[1](h)
    assert torch.equal(inputs, torch.stack([x[0], h[0]]))
    assert torch.equal(weights, torch.stack([expected_0[0], expected_1[0]]))  # (L, H, T, T)
    assert layers.training  # the mode it had is given back
    assert all(not layer._forward_hooks for layer in layers)  # and the hooks are removed
    single = attnlib.SelfAttention(8, 4)
    _, one_head = attention_views.record_attention(single, [single], lambda: single(x))
    assert one_head.shape == (1, 1, 5, 5)  # a single head's weights get a head dimension


def test_a_failing_run_leaves_no_hook_behind() -> None:
    layer = attnlib.MultiHeadAttention(8, 2)

    def run() -> None:
        layer(torch.zeros(1, 3, 5))  # the wrong width

    with pytest.raises(ValueError):
        attention_views.record_attention(layer, [layer], run)
    assert not layer._forward_hooks


def test_neuron_steps_match_an_independent_softmax_and_weighted_sum() -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (
        torch.randn(4, generator=g),
        torch.randn(6, 4, generator=g),
        torch.randn(6, 3, generator=g),
    )
    mask = torch.tensor([True, False, True, True, False, True])
    view = neuron_view.neuron_steps(q, k, v, mask, head=2, query=5)
    qd, kd, vd = q.double(), k.double(), v.double()
    scores = kd @ qd / 2.0  # (T,): 1/sqrt(d_k) with d_k = 4
    expected = torch.zeros(6, dtype=torch.float64)
    expected[mask] = scores[mask].softmax(dim=-1)
    assert (view.head, view.query, view.scale) == (2, 5, 0.5)
    torch.testing.assert_close(view.q_times_k, qd * kd)
    torch.testing.assert_close(view.q_times_k.sum(dim=-1), kd @ qd)  # each row sums to q·k
    torch.testing.assert_close(view.scores, scores)
    assert torch.equal(view.weights[~mask], torch.zeros(2, dtype=torch.float64))  # exactly 0
    torch.testing.assert_close(view.weights, expected)
    torch.testing.assert_close(view.weighted_values, expected[:, None] * vd)
    torch.testing.assert_close(view.output, expected @ vd)
    unscaled = neuron_view.neuron_steps(q, k, v, scale=1.0)
    torch.testing.assert_close(unscaled.weights, (kd @ qd).softmax(-1))


def test_a_query_blocked_from_every_key_gets_zeros_not_nan() -> None:
    view = neuron_view.neuron_steps(torch.ones(2), torch.ones(3, 2), torch.ones(3, 2),
                                    torch.zeros(3, dtype=torch.bool))  # fmt: skip
    assert torch.equal(view.weights, torch.zeros(3, dtype=torch.float64))
    assert torch.equal(view.output, torch.zeros(2, dtype=torch.float64))


def test_neuron_steps_refuse_shapes_that_do_not_fit() -> None:
    with pytest.raises(ValueError, match=r"q, k, v must be \(D,\), \(T, D\), \(T, D_v\)"):
        neuron_view.neuron_steps(torch.ones(3), torch.ones(5, 4), torch.ones(5, 2))
    with pytest.raises(ValueError, match=r"mask must be \(5,\), got \(4,\)"):
        neuron_view.neuron_steps(torch.ones(4), torch.ones(5, 4), torch.ones(5, 2),
                                 torch.ones(4, dtype=torch.bool))  # fmt: skip


@pytest.mark.parametrize("head", [0, 1, 2])
def test_the_neuron_view_of_a_multi_head_layer_is_its_own_computation(head: int) -> None:
    torch.manual_seed(0)
    mha = attnlib.MultiHeadAttention(12, 3).double()
    x = torch.randn(1, 6, 12, dtype=torch.float64)
    mask = attnlib.causal_mask(6)  # True = may attend: key j <= query i
    with torch.no_grad():
        _, weights = mha(x, mask=mask)  # (1, H, T, T)
        q, k, v = (
            split.view(6, 3, 4)[:, head] for split in (mha.w_q(x[0]), mha.w_k(x[0]), mha.w_v(x[0]))
        )
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (T, D), PyTorch's own
    for query in range(6):
        view = neuron_view.neuron_view(mha, x[0], head, query, mask)
        torch.testing.assert_close(view.weights, weights[0, head, query])
        torch.testing.assert_close(view.output, heads[query])
        assert view.mask.tolist() == [j <= query for j in range(6)]
        assert view.weights[query + 1 :].eq(0).all()  # the future is blocked, exactly
        torch.testing.assert_close(view.q, q[query])
        torch.testing.assert_close(view.k, k)


def test_the_neuron_view_of_one_head_with_its_own_value_width() -> None:
    torch.manual_seed(0)
    head = attnlib.AttentionHead(d_model=4, d_k=3, d_v=2)
    x = torch.randn(5, 4)
    with torch.no_grad():
        out, weights = head(x)
    view = neuron_view.neuron_view(head, x, 0, 4)
    assert view.values.shape == (5, 2) and view.scale == pytest.approx(1 / math.sqrt(3))
    torch.testing.assert_close(view.weights.float(), weights[4])
    torch.testing.assert_close(view.output.float(), out[4])


def test_the_neuron_view_refuses_what_it_cannot_show() -> None:
    mha = attnlib.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"head must be an int in \[0, 1\], got 2"):
        neuron_view.neuron_view(mha, torch.zeros(3, 8), 2, 0)
    with pytest.raises(ValueError, match=r"query must be an int in \[0, 2\], got 3"):
        neuron_view.neuron_view(mha, torch.zeros(3, 8), 0, 3)
    with pytest.raises(ValueError, match=r"mask must be \(3,\) or \(3, 3\)"):
        neuron_view.neuron_view(mha, torch.zeros(3, 8), 0, 0, torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(TypeError, match="attention must be a MultiHeadAttention"):
        neuron_view.neuron_view(torch.nn.Linear(8, 8), torch.zeros(3, 8), 0, 0)


def test_the_drawings_show_the_selection_and_every_key() -> None:
    weights = A.float()[None, None]  # (1, 1, 3, 3)
    view = _view(weights, ("a", "<b>", "c"))
    row = attention_views.head_row(view, 1, 0, 1)
    causal = attnlib.causal_mask(3)
    head_html = attention_drawing.head_view_html(row, causal)
    assert "&lt;b&gt;" in head_html and "<b>a</b>" not in head_html  # tokens are escaped
    assert head_html.count("outline:2px solid") == 1  # the query's row is framed
    assert head_html.count("masked") == 1  # key 2 is in the query's future
    mha = attnlib.MultiHeadAttention(4, 1)
    neuron = neuron_view.neuron_view(mha, torch.randn(3, 4), 0, 1, causal)
    neuron_html = attention_drawing.neuron_view_html(neuron, ["a", "<b>", "c"])
    assert neuron_html.count("<td>yes</td>") == 2 and neuron_html.count("<td>no</td>") == 1
    with pytest.raises(ValueError, match="tokens has 2 entries, the view 3 keys"):
        attention_drawing.neuron_view_html(neuron, ["a", "b"])


def test_a_long_texts_neuron_view_shows_the_keys_with_the_largest_weights() -> None:
    length = attention_drawing.MAX_KEYS + 10
    k = torch.zeros(length, 2)
    k[-3:, 0] = 5.0  # the last three keys match the query best
    view = neuron_view.neuron_steps(torch.tensor([1.0, 0.0]), k, torch.ones(length, 2))
    html = attention_drawing.neuron_view_html(view, [f"t{j}" for j in range(length)])
    assert html.count("<td>yes</td>") == attention_drawing.MAX_KEYS
    assert f"<td>{length - 1} t{length - 1}</td>" in html and "10 keys with the smallest" in html


def test_the_model_view_has_a_titled_map_per_head() -> None:
    weights = torch.rand(2, 3, 5, 5, generator=torch.Generator().manual_seed(0)).softmax(-1)
    weights[1, 2] = torch.eye(5)  # layer 2, head 2 looks at itself only
    html = attention_drawing.model_view_html(_view(weights, tuple("abcde")))
    assert html.count("<img ") == 6 and html.count("<tr>") == 2
    prev = attention_views.share_title(
        {"prev": float(attention_views.previous_share(weights)[0, 1])}
    )
    assert f"<b>L1 H1</b><br>{prev}<br>" in html and "<b>L2 H2</b><br>prev .00<br>" in html


def test_a_map_has_one_pixel_per_weight_dark_where_the_weight_is_high() -> None:
    data = attention_drawing.map_png(torch.eye(3))
    image = plt.imread(io.BytesIO(data))  # (3, 3, 4) RGBA in [0, 1]
    assert image.shape == (3, 3, 4)
    assert image[0, 0, :3].sum() < image[0, 1, :3].sum()  # weight 1 darker than weight 0
    long = torch.rand(1, 1, 100, 100).softmax(-1)
    html = attention_drawing.model_view_html(_view(long, tuple(str(i) for i in range(100))))
    tile = plt.imread(io.BytesIO(base64.b64decode(html.split("base64,")[1].split("'")[0])))
    assert tile.shape[:2] == (64, 64)  # a long text's maps are averaged down
