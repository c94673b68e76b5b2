"""Learner answers to notebook 00's exercises (PyTorch basics), corpus b, written blind."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: normalise_columns


def ex1_wrong_rows(x):
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_no_keepdim(x):
    totals = x.sum(dim=-2)  # (..., N)
    return x / totals


def ex1_wrong_dim0_numpy_style(x):
    return x / x.sum(axis=0, keepdims=True)


def ex1_wrong_global_total(x):
    return x / x.sum()


def ex1_wrong_in_place(x):
    x /= x.sum(dim=-2, keepdim=True)
    return x


def ex1_wrong_loop_2d(x):
    out = x.clone()
    for j in range(x.shape[-1]):
        out[:, j] = x[:, j] / x[:, j].sum()
    return out


def ex1_wrong_by_max(x):
    return x / x.max(dim=-2, keepdim=True).values


def ex1_wrong_softmax(x):
    return torch.softmax(x, dim=-2)


def ex1_wrong_no_transpose_back(x):
    xt = x.transpose(-2, -1)  # (..., N, T): the columns are now rows
    return xt / xt.sum(dim=-1, keepdim=True)


def ex1_wrong_float64_rows(x):
    x64 = x.double()
    return (x64 / x64.sum(dim=-1, keepdim=True)).to(x.dtype)


def ex1_right_torch_sum(x):
    return x / torch.sum(x, dim=x.dim() - 2, keepdim=True)


def ex1_right_via_transpose(x):
    xt = x.transpose(-2, -1)
    return (xt / xt.sum(-1, keepdim=True)).transpose(-2, -1)


def ex1_right_einsum_reciprocal(x):
    totals = torch.einsum("...tn->...n", x)  # (..., N)
    return x * totals.unsqueeze(-2).reciprocal()


# ---------------------------------------------------------------- Exercise 2: head_scores


def ex2_wrong_no_head_move(q, k):
    return q @ k.transpose(-2, -1)


def ex2_wrong_einsum_s_t_swapped(q, k):
    return torch.einsum("bthd,bshd->bhst", q, k)


def ex2_wrong_einsum_output_order(q, k):
    return torch.einsum("bthd,bshd->bths", q, k)


def ex2_wrong_scaled(q, k):
    d = q.shape[-1]
    return q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1) / math.sqrt(d)


def ex2_wrong_k_transpose_1_3(q, k):
    return q.transpose(1, 2) @ k.transpose(1, 3)


def ex2_wrong_keys_first(q, k):
    return k.permute(0, 2, 1, 3) @ q.permute(0, 2, 3, 1)


def ex2_wrong_reshape_for_transpose(q, k):
    b, t, h, d = q.shape
    s = k.shape[1]
    qh = q.reshape(b, h, t, d)
    kh = k.reshape(b, h, s, d)
    return qh @ kh.transpose(-2, -1)


def ex2_wrong_softmax(q, k):
    scores = torch.einsum("bthd,bshd->bhts", q, k)
    return torch.softmax(scores, dim=-1)


def ex2_wrong_summed_heads(q, k):
    scores = torch.einsum("bthd,bshd->bts", q, k)  # (B, T, S)
    return scores.unsqueeze(1).expand(-1, q.shape[2], -1, -1)


def ex2_right_einsum(q, k):
    return torch.einsum("bthd,bshd->bhts", q, k)


def ex2_right_broadcast_product(q, k):
    prod = q.unsqueeze(2) * k.unsqueeze(1)  # (B, T, S, H, D)
    return prod.sum(-1).permute(0, 3, 1, 2)  # (B, H, T, S)


def ex2_right_matmul_permute(q, k):
    qh = q.permute(0, 2, 1, 3)  # (B, H, T, D)
    kh = k.permute(0, 2, 1, 3)  # (B, H, S, D)
    return torch.matmul(qh, kh.transpose(-1, -2))


# ---------------------------------------------------------------- Exercise 3: mix_positions


def ex3_wrong_mixes_channels(x, weight, bias):
    return x @ weight.T + bias


def ex3_wrong_bias_along_channels(x, weight, bias):
    return weight @ x + bias


def ex3_wrong_weight_transposed(x, weight, bias):
    return weight.T @ x + bias[:, None]


def ex3_wrong_no_bias(x, weight, bias):
    return weight @ x


def ex3_wrong_no_transpose_back(x, weight, bias):
    return x.transpose(-2, -1) @ weight.T + bias  # (..., C, T_out)


def ex3_wrong_einsum_3d_only(x, weight, bias):
    return torch.einsum("ut,btc->buc", weight, x) + bias[:, None]


def ex3_wrong_dot_t_on_batch(x, weight, bias):
    return (x.T @ weight.T + bias).T


def ex3_right_zeros_float32(x, weight, bias):
    t_out = weight.shape[0]
    out = torch.zeros(*x.shape[:-2], t_out, x.shape[-1])
    for u in range(t_out):
        out[..., u, :] = (weight[u][:, None] * x).sum(dim=-2) + bias[u]
    return out


def ex3_wrong_loop_index_swapped(x, weight, bias):
    rows = []
    for u in range(weight.shape[0]):
        rows.append((weight[:, u][:, None] * x).sum(dim=-2) + bias[u])
    return torch.stack(rows, dim=-2)


def ex3_right_transpose_both_ways(x, weight, bias):
    return (x.transpose(-2, -1) @ weight.T + bias).transpose(-2, -1)


def ex3_right_einsum(x, weight, bias):
    return torch.einsum("ut,...tc->...uc", weight, x) + bias.unsqueeze(-1)


def ex3_right_stack_rows(x, weight, bias):
    rows = [(weight[u, :, None] * x).sum(-2) + bias[u] for u in range(weight.shape[0])]
    return torch.stack(rows, dim=-2)


# ---------------------------------------------------------------- Exercise 4: masked_cross_entropy


def _token_losses(logits, targets):
    log_p = logits.log_softmax(dim=-1)
    return -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)


def ex4_wrong_ignores_mask(logits, targets, mask):
    log_p = logits.log_softmax(dim=-1)
    return -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1).mean()


def ex4_wrong_zeroed_but_divided_by_all(logits, targets, mask):
    log_p = F.log_softmax(logits, dim=-1)
    nll = -log_p.gather(2, targets[..., None])[..., 0]
    return (nll * mask).mean()


def ex4_wrong_log_of_softmax(logits, targets, mask):
    p = torch.softmax(logits, dim=-1)
    nll = -torch.log(p.gather(-1, targets.unsqueeze(-1)).squeeze(-1))
    return nll[mask].mean()


def ex4_wrong_sign(logits, targets, mask):
    log_p = logits.log_softmax(-1)
    picked = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked[mask].mean()


def ex4_wrong_mask_polarity(logits, targets, mask):
    return _token_losses(logits, targets)[~mask].mean()


def ex4_wrong_logsumexp_no_max(logits, targets, mask):
    log_p = logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))
    nll = -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll[mask].mean()


def ex4_wrong_mean_per_sequence(logits, targets, mask):
    nll = _token_losses(logits, targets)
    m = mask.to(nll.dtype)
    per_seq = (nll * m).sum(dim=1) / m.sum(dim=1)
    return per_seq.mean()


def ex4_wrong_softmax_over_positions(logits, targets, mask):
    log_p = torch.log_softmax(logits, dim=1)
    nll = -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll[mask].mean()


def ex4_wrong_returns_float(logits, targets, mask):
    return _token_losses(logits, targets)[mask].mean().item()


def ex4_wrong_divides_by_numel(logits, targets, mask):
    nll = _token_losses(logits, targets)
    return torch.where(mask, nll, torch.zeros_like(nll)).sum() / mask.numel()


def ex4_right_flatten_and_index(logits, targets, mask):
    b, t, v = logits.shape
    log_p = logits.reshape(b * t, v).log_softmax(dim=-1)
    picked = log_p[torch.arange(b * t), targets.reshape(-1)]  # (B·T,)
    return -picked[mask.reshape(-1)].mean()


def ex4_right_logsumexp_weighted(logits, targets, mask):
    target_logit = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    nll = torch.logsumexp(logits, dim=-1) - target_logit  # (B, T)
    m = mask.to(nll.dtype)
    return (nll * m).sum() / m.sum()


def ex4_right_where(logits, targets, mask):
    nll = -torch.gather(F.log_softmax(logits, -1), -1, targets[..., None]).squeeze(-1)
    return torch.where(mask, nll, torch.zeros_like(nll)).sum() / mask.sum()


# ---------------------------------------------------------- Exercise 5: elementwise_derivative


def ex5_wrong_changes_x(f, x):
    x.requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def ex5_wrong_forward_difference(f, x):
    h = 1e-3
    return (f(x + h) - f(x)) / h


def ex5_wrong_mean(f, x):
    xc = x.detach().clone().requires_grad_(True)
    f(xc).mean().backward()
    return xc.grad


def ex5_wrong_grad_non_scalar(f, x):
    xc = x.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(f(xc), xc)
    return grad


def ex5_wrong_float_copy(f, x):
    xc = x.float().requires_grad_()
    f(xc).sum().backward()
    return xc.grad


def ex5_wrong_grad_of_output(f, x):
    xc = x.clone()
    xc.requires_grad = True
    out = f(xc)
    out.retain_grad()
    out.sum().backward()
    return out.grad


def ex5_wrong_loop_1d(f, x):
    grads = []
    for i in range(len(x)):
        xi = x[i].detach().clone().requires_grad_()
        f(xi).backward()
        grads.append(xi.grad)
    return torch.stack(grads)


def ex5_wrong_returns_copy(f, x):
    xc = x.detach().clone().requires_grad_(True)
    f(xc).sum().backward()
    return xc


def ex5_right_autograd_grad(f, x):
    xc = x.detach().requires_grad_()
    (grad,) = torch.autograd.grad(f(xc), xc, grad_outputs=torch.ones_like(xc))
    return grad


def ex5_right_backward_ones(f, x):
    xc = x.clone().requires_grad_(True)
    y = f(xc)
    y.backward(torch.ones_like(y))
    return xc.grad


def ex5_right_loop_flat(f, x):
    flat = x.detach().reshape(-1)
    grads = []
    for value in flat:
        xi = value.clone().requires_grad_(True)
        f(xi).backward()
        grads.append(xi.grad)
    if not grads:
        return torch.zeros_like(x)
    return torch.stack(grads).reshape(x.shape)


# ---------------------------------------------------------------- Exercise 6: accumulated_step


def _batch_loss(model, tokens, targets):
    logits = model(tokens)
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
        total += loss.item() / len(batches)
    opt.step()
    return total


def ex6_wrong_step_in_loop(model, opt, batches):
    opt.zero_grad()
    losses = []
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        opt.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def ex6_wrong_sum_not_mean(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        loss.backward()
        total += loss.item()
    opt.step()
    return total / len(batches)


def ex6_wrong_token_weighted(model, opt, batches):
    opt.zero_grad()
    n_total = sum(targets.numel() for _, targets in batches)
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        share = loss * targets.numel() / n_total
        share.backward()
        total += share.item()
    opt.step()
    return total


def ex6_wrong_one_backward_on_stack(model, opt, batches):
    opt.zero_grad()
    losses = [_batch_loss(model, tokens, targets) for tokens, targets in batches]
    mean = torch.stack(losses).mean()
    mean.backward()
    opt.step()
    return mean.item()


def ex6_wrong_unflattened_logits(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens), targets)
        (loss / len(batches)).backward()
        total += loss.item() / len(batches)
    opt.step()
    return total


def ex6_wrong_returns_last_loss(model, opt, batches):
    opt.zero_grad()
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
    opt.step()
    return loss.item()


def ex6_wrong_zero_grad_after_step(model, opt, batches):
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item() / len(batches)
    opt.step()
    opt.zero_grad()
    return total


def ex6_right_transpose_logits(model, opt, batches):
    opt.zero_grad(set_to_none=True)
    k = len(batches)
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens).transpose(1, 2), targets) / k
        loss.backward()
        total += loss.item()
    opt.step()
    return total


def ex6_right_grads_to_none(model, opt, batches):
    for p in model.parameters():
        p.grad = None
    values = []
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        loss.div(len(batches)).backward()
        values.append(loss.item())
    opt.step()
    return sum(values) / len(values)


def ex6_right_scale_after(model, opt, batches):
    opt.zero_grad()
    values = []
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        loss.backward()
        values.append(loss.detach())
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.grad /= len(batches)
    opt.step()
    return float(torch.stack(values).mean())


E1, E2, E3 = "ex1_normalise_columns", "ex2_head_scores", "ex3_mix_positions"
E4, E5, E6 = "ex4_masked_cross_entropy", "ex5_elementwise_derivative", "ex6_accumulated_step"

ENTRIES = [
    Entry(
        E1,
        "divided each row by its sum instead of each column",
        ex1_wrong_rows,
        named="normalised each row (the last dimension), not each column",
    ),
    Entry(
        E1,
        "summed down the columns but forgot keepdim",
        ex1_wrong_no_keepdim,
        named="took the column totals without keeping their dimension",
    ),
    Entry(
        E1,
        "numpy habit: summed along axis 0, fine for one matrix, not a batch",
        ex1_wrong_dim0_numpy_style,
        named=(
            "summed along dim 0, which is the columns of one matrix but the batch of a (B, T, N) "
            "tensor"
        ),
    ),
    Entry(
        E1,
        "divided by the total of the whole tensor",
        ex1_wrong_global_total,
        named="divided by the total of the whole tensor",
    ),
    Entry(
        E1,
        "divided x in place with /= and returned it",
        ex1_wrong_in_place,
        named="divided x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "loop over columns with x[:, j], which only works for a single matrix",
        ex1_wrong_loop_2d,
        named="looped over x[:, j] as the columns, which they are only for a single (T, N) matrix",
    ),
    Entry(
        E1,
        "divided each column by its largest entry, not its total",
        ex1_wrong_by_max,
        named="divided by each column's largest entry, not its total",
    ),
    Entry(
        E1,
        "used softmax down the columns",
        ex1_wrong_softmax,
        named="exponentiated the entries before normalising (a softmax)",
    ),
    Entry(
        E1,
        "transposed, normalised the rows, forgot to transpose back",
        ex1_wrong_no_transpose_back,
        named="normalised the rows of the transposed matrix and returned it still transposed",
    ),
    Entry(
        E1,
        "worked in float64 (cast back) but normalised the rows",
        ex1_wrong_float64_rows,
        named="normalised each row (the last dimension), not each column",
    ),
    Entry(E1, "torch.sum over dim x.dim() - 2", ex1_right_torch_sum, right=True),
    Entry(E1, "transpose, normalise rows, transpose back", ex1_right_via_transpose, right=True),
    Entry(E1, "einsum totals times their reciprocal", ex1_right_einsum_reciprocal, right=True),
    Entry(
        E2,
        "q @ k.transpose(-2, -1) without moving the heads forward",
        ex2_wrong_no_head_move,
        named=(
            "multiplied q by the transposed keys in the (B, T, H, D) layout, without moving the "
            "heads"
        ),
    ),
    Entry(
        E2,
        "einsum with the output's t and s swapped",
        ex2_wrong_einsum_s_t_swapped,
        named="put the keys first: the result is (B, H, S, T)",
    ),
    Entry(
        E2,
        "einsum output in (B, T, H, S) order",
        ex2_wrong_einsum_output_order,
        named="left the heads after the queries: the result is (B, T, H, S)",
    ),
    Entry(
        E2,
        "divided by sqrt(D) as attention does",
        ex2_wrong_scaled,
        named="divided the scores by √D",
    ),
    Entry(
        E2,
        "k.transpose(1, 3) to get the keys in place",
        ex2_wrong_k_transpose_1_3,
        named="swapped dimensions 1 and 3 of the keys",
    ),
    Entry(
        E2,
        "keys times queries: (B, H, S, T)",
        ex2_wrong_keys_first,
        named="put the keys first: the result is (B, H, S, T)",
    ),
    Entry(
        E2,
        "reshape to (B, H, T, D) instead of transposing",
        ex2_wrong_reshape_for_transpose,
        named="reshaped to (B, H, T, D) instead of swapping dimensions 1 and 2",
    ),
    Entry(
        E2,
        "applied a softmax over the keys",
        ex2_wrong_softmax,
        named="turned the scores into weights with a softmax",
    ),
    Entry(
        E2,
        "summed over the heads and copied the result to every head",
        ex2_wrong_summed_heads,
        named="took one dot product over all heads together and copied it to every head",
    ),
    Entry(E2, "einsum bthd,bshd->bhts", ex2_right_einsum, right=True),
    Entry(
        E2,
        "broadcast product and sum over D, then permute",
        ex2_right_broadcast_product,
        right=True,
    ),
    Entry(E2, "torch.matmul after permute", ex2_right_matmul_permute, right=True),
    Entry(
        E3,
        "x @ weight.T + bias, as nn.Linear does, which mixes the channels",
        ex3_wrong_mixes_channels,
        named=(
            "applied the layer to the channels (the last dimension), as nn.Linear does by default"
        ),
    ),
    Entry(
        E3,
        "bias added without a trailing dimension, along the channels",
        ex3_wrong_bias_along_channels,
        named="added the bias along the channels instead of the positions",
    ),
    Entry(
        E3,
        "used weight.T on the left",
        ex3_wrong_weight_transposed,
        named="used the weight the wrong way round (its transpose)",
    ),
    Entry(E3, "forgot the bias", ex3_wrong_no_bias, named="left out the bias"),
    Entry(
        E3,
        "transposed x but forgot to transpose the result back",
        ex3_wrong_no_transpose_back,
        named="moved the positions to the last dimension and did not move them back",
    ),
    Entry(
        E3,
        "einsum written for a 3-D batch only",
        ex3_wrong_einsum_3d_only,
        named=(
            "named the three dimensions of a (B, T, C) batch in the einsum, so it fits no other "
            "shape"
        ),
    ),
    Entry(
        E3,
        "x.T on a batch reverses every dimension",
        ex3_wrong_dot_t_on_batch,
        named=(
            "transposed x with .T, which reverses every dimension of a batch, not only the last two"
        ),
    ),
    Entry(
        E3,
        "loop into torch.zeros, float32 whatever the input (the course accepts float32 results"
        " here, as it does in Exercise 1: counted wrong in the blind run, then judged right)",
        ex3_right_zeros_float32,
        right=True,
    ),
    Entry(
        E3,
        "loop took weight[:, u] instead of weight[u]",
        ex3_wrong_loop_index_swapped,
        named="took column u of the weight for output position u, not row u",
    ),
    Entry(
        E3, "transpose, linear formula, transpose back", ex3_right_transpose_both_ways, right=True
    ),
    Entry(E3, "einsum ut,...tc->...uc", ex3_right_einsum, right=True),
    Entry(E3, "stacked one output row at a time", ex3_right_stack_rows, right=True),
    Entry(
        E4,
        "averaged over every position, padding too",
        ex4_wrong_ignores_mask,
        named="averaged over every position, padding included",
    ),
    Entry(
        E4,
        "zeroed the padding but took the mean over all B·T",
        ex4_wrong_zeroed_but_divided_by_all,
        named="zeroed the padding's losses but divided by the number of all positions",
    ),
    Entry(
        E4,
        "log of softmax instead of log_softmax",
        ex4_wrong_log_of_softmax,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(E4, "forgot the minus sign", ex4_wrong_sign, named="forgot the minus sign"),
    Entry(
        E4,
        "kept the padding and dropped the real tokens",
        ex4_wrong_mask_polarity,
        named="used the mask the wrong way round (True as padding)",
    ),
    Entry(
        E4,
        "log-sum-exp by hand without subtracting the max",
        ex4_wrong_logsumexp_no_max,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(
        E4,
        "mean of each sequence, then mean of the sequences",
        ex4_wrong_mean_per_sequence,
        named="averaged each sequence on its own, then averaged the sequences",
    ),
    Entry(
        E4,
        "log_softmax over the positions (dim=1)",
        ex4_wrong_softmax_over_positions,
        named="normalised over the positions (dim 1), not over the classes",
    ),
    Entry(
        E4,
        "returned .item(), a Python float",
        ex4_wrong_returns_float,
        named="returned a Python number (.item()), not the loss as a 0-D tensor",
    ),
    Entry(
        E4,
        "where() zeroes padding, then divided by mask.numel()",
        ex4_wrong_divides_by_numel,
        named="zeroed the padding's losses but divided by the number of all positions",
    ),
    Entry(E4, "flatten to (B·T, V) and index with arange", ex4_right_flatten_and_index, right=True),
    Entry(
        E4,
        "logsumexp minus the target logit, weighted by the mask",
        ex4_right_logsumexp_weighted,
        right=True,
    ),
    Entry(E4, "torch.where and divide by mask.sum()", ex4_right_where, right=True),
    Entry(
        E5,
        "set requires_grad on x itself",
        ex5_wrong_changes_x,
        named="made the x you were given require gradients, instead of a copy",
    ),
    Entry(
        E5,
        "finite differences with h = 1e-3 instead of autograd",
        ex5_wrong_forward_difference,
        named="estimated the slopes with a finite difference",
    ),
    Entry(
        E5,
        "backward on the mean of f(x)",
        ex5_wrong_mean,
        named="took the mean of f(x) before backward()",
    ),
    Entry(
        E5,
        "autograd.grad of the whole f(x) without grad_outputs",
        ex5_wrong_grad_non_scalar,
        named="called backward() on f(x) itself, which holds many numbers",
    ),
    Entry(
        E5,
        "x.float().requires_grad_(): a float32 copy, or x itself when x is float32",
        ex5_wrong_float_copy,
        named="turned x into float32 (or a smaller float) before differentiating",
    ),
    Entry(
        E5,
        "returned the gradient of the output instead of the input",
        ex5_wrong_grad_of_output,
        named="returned the .grad of f(x), the output, which is all ones",
    ),
    Entry(
        E5,
        "looped over x[i], which only works for a 1-D x",
        ex5_wrong_loop_1d,
        named="looped over x[i], which are single entries only when x is a vector",
    ),
    Entry(
        E5,
        "returned the copy of x instead of its .grad",
        ex5_wrong_returns_copy,
        named="returned the copy of x, not its .grad",
    ),
    Entry(
        E5,
        "autograd.grad with grad_outputs of ones on a detached x",
        ex5_right_autograd_grad,
        right=True,
    ),
    Entry(E5, "clone, backward(ones_like)", ex5_right_backward_ones, right=True),
    Entry(E5, "one backward per entry of the flattened x", ex5_right_loop_flat, right=True),
    Entry(
        E6,
        "never cleared the gradients",
        ex6_wrong_no_zero_grad,
        named="never cleared the gradients",
    ),
    Entry(
        E6,
        "zero_grad inside the loop",
        ex6_wrong_zero_grad_in_loop,
        named="cleared the gradients inside the loop, before each batch's backward()",
    ),
    Entry(
        E6,
        "step inside the loop",
        ex6_wrong_step_in_loop,
        named="took a step after every batch instead of once after all of them",
    ),
    Entry(
        E6,
        "backward on each full loss: the gradient of the sum",
        ex6_wrong_sum_not_mean,
        named="averaged the loss you return but not the gradients",
    ),
    Entry(
        E6,
        "weighted every batch by its number of tokens",
        ex6_wrong_token_weighted,
        named="weighted each batch by its number of tokens",
    ),
    Entry(
        E6,
        "stacked the losses and did one backward on their mean",
        ex6_wrong_one_backward_on_stack,
        named="added all the batches' losses into one graph and called backward() once",
    ),
    Entry(
        E6,
        "F.cross_entropy on (B, T, V) logits without flattening",
        ex6_wrong_unflattened_logits,
        named="passed the (B, T, V) logits to F.cross_entropy without flattening them",
    ),
    Entry(
        E6,
        "returned the last batch's loss",
        ex6_wrong_returns_last_loss,
        named="returned the last batch's loss, not the mean of all of them",
    ),
    Entry(
        E6,
        "zero_grad after the step instead of before the batches",
        ex6_wrong_zero_grad_after_step,
        named="cleared the gradients after step(), not before the first backward()",
    ),
    Entry(E6, "cross_entropy on logits.transpose(1, 2)", ex6_right_transpose_logits, right=True),
    Entry(E6, "set every p.grad to None by hand", ex6_right_grads_to_none, right=True),
    Entry(
        E6,
        "backward on full losses, then divided the grads by k",
        ex6_right_scale_after,
        right=True,
    ),
]
