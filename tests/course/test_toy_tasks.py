"""The two toy tasks: data is right, training is seeded, and learned attention solves them."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attnlib import naive_self_attention
from attnlib.course.toy_tasks import (
    LookupModel,
    LookupTask,
    NeighbourModel,
    NeighbourTask,
    lookup_accuracy,
    neighbour_accuracy,
    train,
)


def test_lookup_batch_encodes_the_answer() -> None:
    task = LookupTask(num_items=3, num_keys=5, num_values=4)
    x, target = task.batch(50, torch.Generator().manual_seed(0))
    assert x.shape == (50, 4, task.width) and target.shape == (50,)
    k, v = task.num_keys, task.num_values
    item_keys = x[:, :3, :k].argmax(-1)  # (B, 3)
    item_values = x[:, :3, k : k + v].argmax(-1)
    asked = x[:, -1, k + v :].argmax(-1)  # (B,)
    assert (x[:, :3, k + v :] == 0).all() and (x[:, -1, : k + v] == 0).all()
    for b in range(50):
        assert len(set(item_keys[b].tolist())) == 3  # distinct keys
        match = (item_keys[b] == asked[b]).nonzero()
        assert len(match) == 1 and item_values[b, match[0, 0]] == target[b]


def test_naive_attention_cannot_see_the_matching_item() -> None:
    task = LookupTask()
    x, _ = task.batch(20, torch.Generator().manual_seed(1))
    _, weights = naive_self_attention(x)
    question_row = weights[:, -1, :-1]  # (B, items): every item scores 0 with the question
    torch.testing.assert_close(question_row, question_row[:, :1].expand_as(question_row))


def _lookup_loss(model: LookupModel, task: LookupTask):
    def loss(generator: torch.Generator) -> torch.Tensor:
        x, target = task.batch(64, generator)
        logits, _ = model(x)
        return F.cross_entropy(logits, target)

    return loss


def test_training_is_reproducible() -> None:
    task = LookupTask()
    histories = []
    for _ in range(2):
        torch.manual_seed(0)
        model = LookupModel(task)
        histories.append(train(model, _lookup_loss(model, task), steps=20, seed=3))
    assert histories[0] == histories[1] and len(histories[0]) == 20


def test_learned_projections_solve_lookup_and_naive_attention_does_not() -> None:
    task = LookupTask()
    accuracy = {}
    for learned in (True, False):
        torch.manual_seed(0)
        model = LookupModel(task, learned=learned)
        train(model, _lookup_loss(model, task), steps=400)
        accuracy[learned] = lookup_accuracy(model, task)
    assert accuracy[True] >= 0.95
    assert accuracy[False] <= 0.6


def test_neighbour_batch_and_two_heads_learn_both_neighbours() -> None:
    task = NeighbourTask(length=6, vocab_size=5)
    tokens, left, right = task.batch(4, torch.Generator().manual_seed(0))
    assert torch.equal(left[:, 1:], tokens[:, :-1]) and torch.equal(right[:, :-1], tokens[:, 1:])
    assert (left[:, 0] == 5).all() and (right[:, -1] == 5).all()

    task = NeighbourTask()
    torch.manual_seed(0)
    model = NeighbourModel(task, num_heads=2)

    def loss(generator: torch.Generator) -> torch.Tensor:
        tokens, left, right = task.batch(64, generator)
        left_logits, right_logits, _ = model(tokens)
        return F.cross_entropy(left_logits.flatten(0, 1), left.flatten()) + F.cross_entropy(
            right_logits.flatten(0, 1), right.flatten()
        )

    train(model, loss, steps=800)
    left_accuracy, right_accuracy = neighbour_accuracy(model, task)
    assert left_accuracy >= 0.95 and right_accuracy >= 0.95
    tokens, _, _ = task.batch(200, torch.Generator().manual_seed(9))
    _, _, weights = model(tokens)  # (B, H, T, T)
    mean = weights.mean(0)  # (H, T, T)
    to_left = torch.stack([mean[h].diagonal(-1).mean() for h in range(2)])
    to_right = torch.stack([mean[h].diagonal(1).mean() for h in range(2)])
    # The two heads split the relations: one mostly looks left, the other right.
    assert to_left.max() > 0.4 and to_right.max() > 0.4 and to_left.argmax() != to_right.argmax()
