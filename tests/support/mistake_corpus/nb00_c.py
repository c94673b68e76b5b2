"""Learner answers to notebook 00's exercises (PyTorch basics), corpus c, written blind."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from mistake_corpus.corpus import REFUSED, Entry

E1, E2, E3 = "ex1_normalise_columns", "ex2_head_scores", "ex3_mix_positions"
E4, E5, E6 = "ex4_masked_cross_entropy", "ex5_elementwise_derivative", "ex6_accumulated_step"

# ------------------------------------------ Exercise 1: normalise_columns


def ex1_wrong_last_dim(x):
    totals = torch.sum(x, -1, keepdim=True)
    return x / totals


def ex1_wrong_sum_no_keepdim(x):
    return x / x.sum(dim=-2)  # (..., N): fine for one matrix, not for a batch


def ex1_wrong_axis0(x):
    return x / x.sum(axis=0, keepdims=True)


def ex1_wrong_everything(x):
    return x / x.sum()


def ex1_wrong_in_place(x):
    x.div_(x.sum(dim=-2, keepdim=True))
    return x


def ex1_wrong_numpy(x):
    a = np.asarray(x)
    return a / a.sum(axis=-2, keepdims=True)


def ex1_wrong_mean(x):
    return x / x.mean(dim=-2, keepdim=True)


def ex1_wrong_loop_columns(x):
    out = torch.empty_like(x)
    for j in range(x.shape[1]):
        out[:, j] = x[:, j] / x[:, j].sum()
    return out


def ex1_wrong_transpose_no_back(x):
    xt = x.transpose(-1, -2)
    return xt / xt.sum(-1, keepdim=True)


def ex1_refused_normalize(x):
    return F.normalize(x, p=1, dim=-2)


def ex1_right_transpose_rows(x):
    xt = x.transpose(-2, -1)  # (..., N, T)
    return (xt / xt.sum(dim=-1, keepdim=True)).transpose(-2, -1)


def ex1_right_reciprocal(x):
    totals = x.sum(dim=x.dim() - 2, keepdim=True)  # (..., 1, N)
    return x * totals.reciprocal()


# ------------------------------------------ Exercise 2: head_scores


def ex2_wrong_no_head_move(q, k):
    return q @ k.transpose(-2, -1)


def ex2_wrong_einsum_order(q, k):
    return torch.einsum("bthd,bshd->bths", q, k)


def ex2_wrong_keys_first(q, k):
    return torch.einsum("bthd,bshd->bhst", q, k)


def ex2_wrong_reshape(q, k):
    B, T, H, D = q.shape
    S = k.shape[1]
    qh = q.reshape(B, H, T, D)
    kh = k.reshape(B, H, S, D)
    return qh @ kh.transpose(-2, -1)


def ex2_wrong_scaled(q, k):
    D = q.shape[-1]
    return q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1) / D**0.5


def ex2_wrong_broadcast_no_permute(q, k):
    return (q[:, :, None] * k[:, None]).sum(-1)  # (B, T, S, H)


def ex2_wrong_view_keys(q, k):
    B, S, H, D = k.shape
    return q.transpose(1, 2) @ k.view(B, H, D, S)


def ex2_right_einsum(q, k):
    return torch.einsum("bthd,bshd->bhts", q, k)


def ex2_right_broadcast(q, k):
    qh = q.permute(0, 2, 1, 3)  # (B, H, T, D)
    kh = k.permute(0, 2, 1, 3)  # (B, H, S, D)
    return (qh.unsqueeze(3) * kh.unsqueeze(2)).sum(dim=-1)  # (B, H, T, S)


# ------------------------------------------ Exercise 3: mix_positions


def ex3_wrong_linear_formula(x, weight, bias):
    return x @ weight.T + bias


def ex3_wrong_weight_transposed(x, weight, bias):
    return weight.T @ x + bias[:, None]


def ex3_wrong_bias_on_channels(x, weight, bias):
    return weight @ x + bias


def ex3_wrong_no_bias(x, weight, bias):
    return torch.matmul(weight, x)


def ex3_wrong_no_transpose_back(x, weight, bias):
    return x.transpose(-2, -1) @ weight.T + bias  # (..., C, T_out)


def ex3_wrong_2d_einsum(x, weight, bias):
    return torch.einsum("ut,tc->uc", weight, x) + bias[:, None]


def ex3_wrong_einsum_index(x, weight, bias):
    return torch.einsum("tu,...tc->...uc", weight, x) + bias.unsqueeze(-1)


def ex3_wrong_bias_twice(x, weight, bias):
    xt = x.transpose(-2, -1)  # (..., C, T)
    out = xt @ weight.T + bias  # (..., C, T_out)
    return out.transpose(-2, -1) + bias[:, None]


def ex3_right_einsum(x, weight, bias):
    return torch.einsum("ut,...tc->...uc", weight, x) + bias[:, None]


def ex3_right_linear_sideways(x, weight, bias):
    xt = x.transpose(-2, -1)  # (..., C, T)
    return (xt @ weight.T + bias).transpose(-2, -1)  # (..., T_out, C)


# ------------------------------------------ Exercise 4: masked_cross_entropy


def _log_probs(logits):
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


def _picked(logits, targets):
    return _log_probs(logits).gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)


def ex4_wrong_mask_ignored(logits, targets, mask):
    return -_picked(logits, targets).mean()


def ex4_wrong_zeroed_then_mean(logits, targets, mask):
    return -(_picked(logits, targets) * mask).mean()


def ex4_wrong_log_of_softmax(logits, targets, mask):
    probs = torch.softmax(logits, dim=-1)
    picked = torch.log(probs).gather(-1, targets[..., None])[..., 0]
    return -picked[mask].mean()


def ex4_wrong_sum(logits, targets, mask):
    return -_picked(logits, targets)[mask].sum()


def ex4_wrong_mask_flipped(logits, targets, mask):
    return -_picked(logits, targets)[~mask].mean()


def ex4_wrong_no_minus(logits, targets, mask):
    return _picked(logits, targets)[mask].mean()


def ex4_wrong_mean_of_sequence_means(logits, targets, mask):
    m = mask.float()
    per_seq = -(_picked(logits, targets) * m).sum(-1) / m.sum(-1)  # (B,)
    return per_seq.mean()


def ex4_wrong_no_shift(logits, targets, mask):
    log_z = torch.log(torch.exp(logits).sum(-1))  # (B, T)
    target_logit = logits.gather(-1, targets[..., None])[..., 0]
    return (log_z - target_logit)[mask].mean()


def ex4_refused_cross_entropy(logits, targets, mask):
    return F.cross_entropy(logits[mask], targets[mask])


def ex4_right_logsumexp(logits, targets, mask):
    nll = torch.logsumexp(logits, -1) - logits.gather(-1, targets[..., None]).squeeze(-1)
    m = mask.to(logits.dtype)
    return (nll * m).sum() / m.sum()


def ex4_right_one_hot(logits, targets, mask):
    B, T, V = logits.shape
    log_p = logits.log_softmax(-1).reshape(B * T, V)
    one_hot = F.one_hot(targets.reshape(-1), V).to(log_p.dtype)
    losses = -(one_hot * log_p).sum(-1)  # (B·T,)
    keep = mask.reshape(-1)
    return losses[keep].sum() / keep.sum()


# ------------------------------------------ Exercise 5: elementwise_derivative


def ex5_wrong_x_itself(f, x):
    x.requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def ex5_wrong_no_sum(f, x):
    x = x.detach().clone().requires_grad_(True)
    f(x).backward()
    return x.grad


def ex5_wrong_mean(f, x):
    x = x.detach().clone().requires_grad_(True)
    f(x).mean().backward()
    return x.grad


def ex5_wrong_finite_difference(f, x):
    h = 1e-3
    return (f(x + h) - f(x)) / h


def ex5_wrong_grad_left_on_x(f, x):
    x.requires_grad_()
    f(x).sum().backward()
    slope = x.grad.clone()
    x.requires_grad_(False)
    return slope


def ex5_wrong_no_grad(f, x):
    xc = x.clone().requires_grad_(True)
    with torch.no_grad():
        y = f(xc)
    y.sum().backward()
    return xc.grad


def ex5_wrong_float64_mean(f, x):
    x64 = x.detach().double().requires_grad_(True)
    f(x64).mean().backward()
    return x64.grad.to(x.dtype)


def ex5_right_autograd_grad(f, x):
    xc = x.detach().clone().requires_grad_(True)
    (slope,) = torch.autograd.grad(f(xc).sum(), xc)
    return slope


def ex5_right_backward_ones(f, x):
    leaf = x.detach().requires_grad_()
    y = f(leaf)
    y.backward(torch.ones_like(y))
    return leaf.grad


# ------------------------------------------ Exercise 6: accumulated_step


def _batch_loss(model, tokens, targets):
    logits = model(tokens)  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def ex6_wrong_no_zero_grad(model, opt, batches):
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item()
    opt.step()
    return total / len(batches)


def ex6_wrong_zero_grad_in_loop(model, opt, batches):
    total = 0.0
    for tokens, targets in batches:
        opt.zero_grad()
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item()
    opt.step()
    return total / len(batches)


def ex6_wrong_step_in_loop(model, opt, batches):
    losses = []
    opt.zero_grad()
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        opt.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def ex6_wrong_not_divided(model, opt, batches):
    opt.zero_grad()
    losses = []
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        loss.backward()
        losses.append(loss.item())
    opt.step()
    return sum(losses) / len(losses)


def ex6_wrong_returns_sum(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item()
    opt.step()
    return total


def ex6_wrong_token_weighted(model, opt, batches):
    opt.zero_grad()
    n_tokens = sum(t.numel() for _, t in batches)
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        share = loss * targets.numel() / n_tokens
        share.backward()
        total += share.item()
    opt.step()
    return total


def ex6_wrong_zero_grad_after(model, opt, batches):
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item() / len(batches)
    opt.step()
    opt.zero_grad()
    return total


def ex6_wrong_logits_3d(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens), targets)
        (loss / len(batches)).backward()
        total += loss.item() / len(batches)
    opt.step()
    return total


def ex6_wrong_one_backward(model, opt, batches):
    opt.zero_grad()
    losses = [_batch_loss(model, tokens, targets) for tokens, targets in batches]
    mean = torch.stack(losses).mean()
    mean.backward()
    opt.step()
    return mean.item()


def ex6_right_list_of_items(model, opt, batches):
    model.zero_grad(set_to_none=True)
    k = len(batches)
    values = []
    for tokens, targets in batches:
        logits = model(tokens)
        B, T, V = logits.shape
        loss = F.cross_entropy(logits.view(B * T, V), targets.view(B * T))
        loss.mul(1.0 / k).backward()
        values.append(loss.item())
    opt.step()
    return float(sum(values) / k)


def ex6_right_transpose_classes(model, opt, batches):
    opt.zero_grad()
    mean = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens).transpose(1, 2), targets) / len(batches)
        loss.backward()
        mean += loss.detach().item()
    opt.step()
    return mean


ENTRIES = [
    Entry(
        E1,
        "divided by the sum of each row (dim=-1)",
        ex1_wrong_last_dim,
        named="normalised each row (the last dimension), not each column",
    ),
    Entry(
        E1,
        "summed down the columns but without keepdim",
        ex1_wrong_sum_no_keepdim,
        named="took the column totals without keeping their dimension",
    ),
    Entry(
        E1,
        "numpy habit: axis=0, the first dimension, not the columns",
        ex1_wrong_axis0,
        named=(
            "summed along dim 0, which is the columns of one matrix but the batch of a (B, "
            "T, N) tensor"
        ),
    ),
    Entry(
        E1,
        "divided by the total of the whole tensor",
        ex1_wrong_everything,
        named="divided by the total of the whole tensor",
    ),
    Entry(
        E1,
        "divided x in place with div_",
        ex1_wrong_in_place,
        named="divided x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "did it in numpy and returned a numpy array",
        ex1_wrong_numpy,
        named="worked in numpy and returned a numpy array, not a tensor",
    ),
    Entry(
        E1,
        "divided by the column mean, not the total",
        ex1_wrong_mean,
        named="divided by each column's mean, not its total",
    ),
    Entry(
        E1,
        "a loop over columns written for one matrix",
        ex1_wrong_loop_columns,
        named="looped over x[:, j] as the columns, which they are only for a single (T, N) matrix",
    ),
    Entry(
        E1,
        "transposed to use rows and forgot to transpose back",
        ex1_wrong_transpose_no_back,
        named="normalised the rows of the transposed matrix and returned it still transposed",
    ),
    Entry(E1, "F.normalize with p=1", ex1_refused_normalize, named=REFUSED),
    Entry(E1, "transpose, normalise rows, transpose back", ex1_right_transpose_rows, right=True),
    Entry(E1, "multiply by the reciprocal of the totals", ex1_right_reciprocal, right=True),
    Entry(
        E2,
        "q @ k.transpose(-2, -1) without moving the heads",
        ex2_wrong_no_head_move,
        named=(
            "multiplied q by the transposed keys in the (B, T, H, D) layout, without moving "
            "the heads"
        ),
    ),
    Entry(
        E2,
        "einsum with the output in (B, T, H, S) order",
        ex2_wrong_einsum_order,
        named="left the heads after the queries: the result is (B, T, H, S)",
    ),
    Entry(
        E2,
        "einsum giving (B, H, S, T): keys and queries swapped",
        ex2_wrong_keys_first,
        named="put the keys first: the result is (B, H, S, T)",
    ),
    Entry(
        E2,
        "reshape to (B, H, T, D) instead of transposing",
        ex2_wrong_reshape,
        named="reshaped to (B, H, T, D) instead of swapping dimensions 1 and 2",
    ),
    Entry(E2, "divided the scores by sqrt(D)", ex2_wrong_scaled, named="divided the scores by √D"),
    Entry(
        E2,
        "broadcast product summed over D, heads never moved",
        ex2_wrong_broadcast_no_permute,
        named="put the heads last: the result is (B, T, S, H)",
    ),
    Entry(
        E2,
        "view on the keys to (B, H, D, S)",
        ex2_wrong_view_keys,
        named="reshaped the keys straight to (B, H, D, S)",
    ),
    Entry(E2, "einsum bthd,bshd->bhts", ex2_right_einsum, right=True),
    Entry(E2, "permute both then broadcast and sum over D", ex2_right_broadcast, right=True),
    Entry(
        E3,
        "copied nn.Linear's x @ W.T + b along the channels",
        ex3_wrong_linear_formula,
        named=(
            "applied the layer to the channels (the last dimension), as nn.Linear does by default"
        ),
    ),
    Entry(
        E3,
        "multiplied by the transposed weight",
        ex3_wrong_weight_transposed,
        named="used the weight the wrong way round (its transpose)",
    ),
    Entry(
        E3,
        "added the bias along the channels",
        ex3_wrong_bias_on_channels,
        named="added the bias along the channels instead of the positions",
    ),
    Entry(E3, "forgot the bias", ex3_wrong_no_bias, named="left out the bias"),
    Entry(
        E3,
        "linear along the positions but left (..., C, T_out)",
        ex3_wrong_no_transpose_back,
        named="moved the positions to the last dimension and did not move them back",
    ),
    Entry(
        E3,
        "einsum written for a single (T, C) matrix",
        ex3_wrong_2d_einsum,
        named="named the two dimensions of one (T, C) sequence in the einsum, so it fits no batch",
    ),
    Entry(
        E3,
        "einsum reading the weight as (T, T_out)",
        ex3_wrong_einsum_index,
        named="read the weight as (T, T_out), the wrong way round (its transpose)",
    ),
    Entry(E3, "added the bias twice", ex3_wrong_bias_twice, named="added the bias twice"),
    Entry(E3, "einsum ut,...tc->...uc plus bias", ex3_right_einsum, right=True),
    Entry(E3, "transpose, x @ W.T + b, transpose back", ex3_right_linear_sideways, right=True),
    Entry(
        E4,
        "averaged over every position, mask ignored",
        ex4_wrong_mask_ignored,
        named="averaged over every position, padding included",
    ),
    Entry(
        E4,
        "zeroed the padding, then mean over all B·T",
        ex4_wrong_zeroed_then_mean,
        named="zeroed the padding's losses but divided by the number of all positions",
    ),
    Entry(
        E4,
        "log of softmax instead of log_softmax",
        ex4_wrong_log_of_softmax,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(
        E4,
        "summed the losses instead of averaging",
        ex4_wrong_sum,
        named="added up the counted positions' losses instead of averaging them",
    ),
    Entry(
        E4,
        "kept the padding and dropped the real tokens",
        ex4_wrong_mask_flipped,
        named="used the mask the wrong way round (True as padding)",
    ),
    Entry(E4, "forgot the minus sign", ex4_wrong_no_minus, named="forgot the minus sign"),
    Entry(
        E4,
        "mean of each sequence's mean",
        ex4_wrong_mean_of_sequence_means,
        named="averaged each sequence on its own, then averaged the sequences",
    ),
    Entry(
        E4,
        "log-sum-exp without subtracting the max",
        ex4_wrong_no_shift,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(E4, "F.cross_entropy on the kept positions", ex4_refused_cross_entropy, named=REFUSED),
    Entry(E4, "logsumexp minus target logit, masked sum / count", ex4_right_logsumexp, right=True),
    Entry(E4, "one-hot times log_softmax, flattened", ex4_right_one_hot, right=True),
    Entry(
        E5,
        "set requires_grad on x itself",
        ex5_wrong_x_itself,
        named="made the x you were given require gradients, instead of a copy",
    ),
    Entry(
        E5,
        "backward() on the non-scalar f(x)",
        ex5_wrong_no_sum,
        named="called backward() on f(x) itself, which holds many numbers",
    ),
    Entry(
        E5,
        "backward on the mean instead of the sum",
        ex5_wrong_mean,
        named="took the mean of f(x) before backward()",
    ),
    Entry(
        E5,
        "forward finite difference instead of autograd",
        ex5_wrong_finite_difference,
        named="estimated the slopes with a finite difference",
    ),
    Entry(
        E5,
        "switched requires_grad back off but left x.grad",
        ex5_wrong_grad_left_on_x,
        named="made the x you were given require gradients, instead of a copy",
    ),
    Entry(
        E5,
        "ran f under torch.no_grad()",
        ex5_wrong_no_grad,
        named="called f under torch.no_grad(), so nothing was recorded",
    ),
    Entry(
        E5,
        "float64 copy (fine) but backward on the mean",
        ex5_wrong_float64_mean,
        named="took the mean of f(x) before backward()",
    ),
    Entry(E5, "torch.autograd.grad on the sum", ex5_right_autograd_grad, right=True),
    Entry(E5, "backward with ones_like", ex5_right_backward_ones, right=True),
    Entry(
        E6, "never called zero_grad", ex6_wrong_no_zero_grad, named="never cleared the gradients"
    ),
    Entry(
        E6,
        "zero_grad inside the loop",
        ex6_wrong_zero_grad_in_loop,
        named="cleared the gradients inside the loop, before each batch's backward()",
    ),
    Entry(
        E6,
        "opt.step() inside the loop",
        ex6_wrong_step_in_loop,
        named="took a step after every batch instead of once after all of them",
    ),
    Entry(
        E6,
        "backward on each full loss, not divided by k",
        ex6_wrong_not_divided,
        named="averaged the loss you return but not the gradients",
    ),
    Entry(
        E6,
        "returned the sum of the losses",
        ex6_wrong_returns_sum,
        named="returned the sum of the batches' losses, not their mean",
    ),
    Entry(
        E6,
        "weighted each batch by its number of tokens",
        ex6_wrong_token_weighted,
        named="weighted each batch by its number of tokens",
    ),
    Entry(
        E6,
        "zero_grad after the step instead of before",
        ex6_wrong_zero_grad_after,
        named="cleared the gradients after step(), not before the first backward()",
    ),
    Entry(
        E6,
        "passed (B, T, V) logits straight to F.cross_entropy",
        ex6_wrong_logits_3d,
        named="passed the (B, T, V) logits to F.cross_entropy without flattening them",
    ),
    Entry(
        E6,
        "one backward() on the stacked mean",
        ex6_wrong_one_backward,
        named="added all the batches' losses into one graph and called backward() once",
    ),
    Entry(E6, "model.zero_grad, view, mul(1/k)", ex6_right_list_of_items, right=True),
    Entry(E6, "classes moved to dim 1 with transpose", ex6_right_transpose_classes, right=True),
]
