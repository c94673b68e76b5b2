"""Learner answers to notebook 00's exercises (PyTorch basics), corpus d, written blind: dtypes
that do not carry through, epsilons, `.T` on a batch, reshapes without a transpose, crashes."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_normalise_columns", "ex2_head_scores", "ex3_mix_positions"
E4, E5, E6 = "ex4_masked_cross_entropy", "ex5_elementwise_derivative", "ex6_accumulated_step"

# ------------------------------------------ Exercise 1: normalise_columns


def ex1_wrong_dot_t_batch(x):
    # Section 3 did rows: flip, do rows, flip back.
    flipped = x.T
    return (flipped / flipped.sum(dim=-1, keepdim=True)).T


def ex1_wrong_eps_large(x):
    return x / (x.sum(dim=-2, keepdim=True) + 1e-3)  # never divide by zero


def ex1_wrong_float32(x):
    x = x.float()  # make sure it is a float tensor
    return x / x.sum(dim=-2, keepdim=True)


def ex1_wrong_transpose_0_1(x):
    xt = x.transpose(0, 1)
    return (xt / xt.sum(dim=-1, keepdim=True)).transpose(0, 1)


def ex1_right_mt(x):
    rows = x.mT
    return (rows / rows.sum(dim=-1, keepdim=True)).mT


def ex1_right_reciprocal(x):
    return x * torch.sum(x, dim=-2, keepdim=True).reciprocal()


# ------------------------------------------ Exercise 2: head_scores


def ex2_wrong_reshape_heads(q, k):
    B, T, H, D = q.shape
    S = k.shape[1]
    q = q.reshape(B, H, T, D)
    k = k.reshape(B, H, S, D)
    return q @ k.transpose(-2, -1)


def ex2_wrong_no_head_move(q, k):
    return q @ k.transpose(-2, -1)  # (B, T, H, D) @ (B, S, D, H)


def ex2_wrong_dot_t_batch(q, k):
    qh = q.permute(0, 2, 1, 3)  # (B, H, T, D)
    kh = k.permute(0, 2, 1, 3)  # (B, H, S, D)
    return qh @ kh.T


def ex2_wrong_view_after_transpose(q, k):
    B, T, H, D = q.shape
    qh = q.transpose(1, 2).view(B, H, T, D)
    kh = k.transpose(1, 2)
    return qh @ kh.transpose(-2, -1)


def ex2_right_einsum(q, k):
    return torch.einsum("bthd,bshd->bhts", q, k)


def ex2_right_broadcast_sum(q, k):
    # (B, T, 1, H, D) * (B, 1, S, H, D) summed over D -> (B, T, S, H)
    products = (q[:, :, None] * k[:, None]).sum(dim=-1)
    return products.permute(0, 3, 1, 2)


# ------------------------------------------ Exercise 3: mix_positions


def ex3_wrong_bias_last_dim(x, weight, bias):
    return weight @ x + bias  # bias added along the channels


def ex3_wrong_dot_t_batch(x, weight, bias):
    return (x.T @ weight.T + bias).T


def ex3_wrong_weight_not_transposed(x, weight, bias):
    return (x.transpose(-2, -1) @ weight).transpose(-2, -1) + bias[:, None]


def ex3_right_einsum(x, weight, bias):
    return torch.einsum("ut,...tc->...uc", weight, x) + bias.unsqueeze(-1)


def ex3_right_mt(x, weight, bias):
    return (x.mT @ weight.mT + bias).mT


# ------------------------------------------ Exercise 4: masked_cross_entropy


def ex4_wrong_gather_no_unsqueeze(logits, targets, mask):
    logp = logits.log_softmax(dim=-1)
    picked = logp.gather(-1, targets)  # one per position
    return -(picked * mask).sum() / mask.sum()


def ex4_wrong_plus_one(logits, targets, mask):
    logp = logits - logits.logsumexp(dim=-1, keepdim=True)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (nll * mask).sum() / (mask.sum() + 1)  # +1 so it never divides by zero


def ex4_wrong_float32_logits(logits, targets, mask):
    logp = torch.log_softmax(logits.float(), dim=-1)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll[mask].mean()


def ex4_wrong_index_with_targets(logits, targets, mask):
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp[..., targets]
    return nll[mask].mean()


def ex4_right_one_hot(logits, targets, mask):
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    onehot = F.one_hot(targets, logits.shape[-1]).to(logp.dtype)
    nll = -(onehot * logp).sum(dim=-1)
    return torch.where(mask, nll, torch.zeros_like(nll)).sum() / mask.sum()


def ex4_right_take_along(logits, targets, mask):
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    logp = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    picked = torch.take_along_dim(logp, targets[..., None], dim=-1)[..., 0]
    return -picked.masked_select(mask).mean()


# ------------------------------------------ Exercise 5: elementwise_derivative


def ex5_wrong_ones_float32(f, x):
    xx = x.detach().clone().requires_grad_(True)
    y = f(xx)
    (grad,) = torch.autograd.grad(y, xx, grad_outputs=torch.ones(xx.shape))
    return grad


def ex5_wrong_backward_ones_float32(f, x):
    xx = x.detach().clone().requires_grad_()
    f(xx).backward(torch.ones(x.shape))
    return xx.grad


def ex5_wrong_float32_copy(f, x):
    xx = x.detach().float().requires_grad_()
    f(xx).sum().backward()
    return xx.grad


def ex5_wrong_backward_no_argument(f, x):
    xx = x.detach().clone().requires_grad_()
    f(xx).backward()  # y.backward() gives dy/dx
    return xx.grad


def ex5_right_ones_like(f, x):
    xx = x.detach().clone().requires_grad_()
    y = f(xx)
    y.backward(torch.ones_like(y))
    return xx.grad.detach()


def ex5_right_enable_grad_sum(f, x):
    with torch.enable_grad():
        leaf = x.clone().detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf).sum(), leaf)[0]


# ------------------------------------------ Exercise 6: accumulated_step


def ex6_right_returns_tensor(model, opt, batches):
    opt.zero_grad()
    total = 0
    for tokens, targets in batches:
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        (loss / len(batches)).backward()
        total = total + loss.detach()
    opt.step()
    return total / len(batches)


def ex6_wrong_not_divided_view(model, opt, batches):
    opt.zero_grad()
    losses = []
    for tokens, targets in batches:
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
        loss.backward()
        losses.append(loss.item())
    opt.step()
    return sum(losses) / len(losses)


def ex6_wrong_no_transpose_ce(model, opt, batches):
    opt.zero_grad()
    k = len(batches)
    total = 0.0
    for tokens, targets in batches:
        logits = model(tokens)  # (B, T, V)
        loss = F.cross_entropy(logits, targets)
        (loss / k).backward()
        total += loss.item()
    opt.step()
    return total / k


def ex6_right_transpose_ce(model, opt, batches):
    opt.zero_grad(set_to_none=True)
    k = len(batches)
    values = []
    for tokens, targets in batches:
        logits = model(tokens)  # (B, T, V)
        loss = F.cross_entropy(logits.transpose(1, 2), targets)  # classes in dim 1
        (loss / k).backward()
        values.append(float(loss))
    opt.step()
    return sum(values) / k


ENTRIES = [
    Entry(
        E1,
        "rows of x.T, then .T back (x.T reverses a batch)",
        ex1_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E1,
        "+ 1e-3 in the column totals",
        ex1_wrong_eps_large,
        named="added a small number (an epsilon) to each column's total",
    ),
    Entry(
        E1,
        "x.float() first: float64 comes back float32",
        ex1_wrong_float32,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "transpose(0, 1), rows, transpose back",
        ex1_wrong_transpose_0_1,
        named=(
            "swapped dimensions 0 and 1, which are the two dimensions of one matrix "
            "but not of a batch"
        ),
    ),
    Entry(E1, ".mT, rows, .mT back", ex1_right_mt, right=True),
    Entry(E1, "times the reciprocal of the totals", ex1_right_reciprocal, right=True),
    Entry(
        E2,
        "reshape to (B, H, T, D) without a transpose",
        ex2_wrong_reshape_heads,
        named="reshaped to (B, H, T, D) instead of swapping dimensions 1 and 2",
    ),
    Entry(
        E2,
        "q @ k.transpose(-2, -1) without moving the heads",
        ex2_wrong_no_head_move,
        named=(
            "multiplied q by the transposed keys in the (B, T, H, D) layout, "
            "without moving the heads"
        ),
    ),
    Entry(
        E2,
        "permute, then kh.T on the 4-D keys",
        ex2_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(E2, "view after transpose (not contiguous)", ex2_wrong_view_after_transpose, right=True),
    Entry(E2, "einsum bthd,bshd->bhts", ex2_right_einsum, right=True),
    Entry(E2, "broadcast product summed, then permute", ex2_right_broadcast_sum, right=True),
    Entry(
        E3,
        "weight @ x + bias: bias along the channels",
        ex3_wrong_bias_last_dim,
        named="added the bias along the channels instead of the positions",
    ),
    Entry(
        E3,
        "x.T @ weight.T + bias, .T back (x.T reverses a batch)",
        ex3_wrong_dot_t_batch,
        named=(
            "transposed x with .T, which reverses every dimension of a batch, not only the last two"
        ),
    ),
    Entry(
        E3,
        "weight not transposed",
        ex3_wrong_weight_not_transposed,
        named="used the weight the wrong way round (its transpose)",
    ),
    Entry(E3, "einsum ut,...tc->...uc", ex3_right_einsum, right=True),
    Entry(E3, "through .mT as a linear layer", ex3_right_mt, right=True),
    Entry(
        E4,
        "gather without unsqueeze: crashes",
        ex4_wrong_gather_no_unsqueeze,
        named=("gave gather or scatter an index with fewer dimensions than the tensor it indexes"),
    ),
    Entry(
        E4,
        "divides by the count + 1",
        ex4_wrong_plus_one,
        named=("added a number to the count of positions it divides by (to keep it from 0)"),
    ),
    Entry(
        E4,
        "logits.float(): float64 logits give a float32 loss",
        ex4_wrong_float32_logits,
        named="returns float32 for float64 input",
    ),
    Entry(
        E4,
        "logp[..., targets]: a table, not one per position",
        ex4_wrong_index_with_targets,
        named=(
            "indexed the log-probabilities with the whole targets tensor, which "
            "picks every target at every position (a table), not one per position"
        ),
    ),
    Entry(E4, "one-hot times log-probabilities", ex4_right_one_hot, right=True),
    Entry(E4, "take_along_dim and masked_select", ex4_right_take_along, right=True),
    Entry(
        E5,
        "grad_outputs=torch.ones(shape): float32 against float64",
        ex5_wrong_ones_float32,
        right=True,
    ),
    Entry(E5, "backward(torch.ones(shape)): float32", ex5_wrong_backward_ones_float32, right=True),
    Entry(
        E5,
        "x.float() copy: float32 derivative",
        ex5_wrong_float32_copy,
        named="turned x into float32 (or a smaller float) before differentiating",
    ),
    Entry(
        E5,
        "backward() with no argument on a vector",
        ex5_wrong_backward_no_argument,
        named="called backward() on f(x) itself, which holds many numbers",
    ),
    Entry(E5, "backward(ones_like(y))", ex5_right_ones_like, right=True),
    Entry(E5, "enable_grad and autograd.grad of the sum", ex5_right_enable_grad_sum, right=True),
    Entry(E6, "returns the mean as a detached 0-D tensor", ex6_right_returns_tensor, right=True),
    Entry(
        E6,
        "view(-1, V), backward of each loss undivided",
        ex6_wrong_not_divided_view,
        named="averaged the loss you return but not the gradients",
    ),
    Entry(
        E6,
        "cross_entropy on (B, T, V) as it is",
        ex6_wrong_no_transpose_ce,
        named="passed the (B, T, V) logits to F.cross_entropy without flattening them",
    ),
    Entry(E6, "cross_entropy on logits.transpose(1, 2)", ex6_right_transpose_ce, right=True),
]
