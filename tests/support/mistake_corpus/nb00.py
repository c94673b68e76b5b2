"""Learner answers to notebook 00's exercises (PyTorch basics), written before reading the
checkers' tables."""

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- ex1: normalise_columns


def ex1_wrong_rows(x):
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_no_keepdim(x):
    return x / x.sum(dim=-2)


def ex1_wrong_dim0(x):
    totals = x.sum(dim=0, keepdim=True)  # the columns of my matrix
    return x / totals


def ex1_wrong_global(x):
    return x / x.sum()


def ex1_wrong_forgot_transpose_back(x):
    xt = x.transpose(-2, -1)  # (..., N, T): now the columns are rows
    return xt / xt.sum(dim=-1, keepdim=True)


def ex1_wrong_in_place(x):
    x /= x.sum(dim=-2, keepdim=True)
    return x


def ex1_wrong_softmax(x):
    return torch.softmax(x, dim=-2)


def ex1_wrong_loop_2d(x):
    out = torch.empty_like(x)
    for j in range(x.shape[1]):
        out[:, j] = x[:, j] / x[:, j].sum()
    return out


def ex1_wrong_float64_mean(x):
    xd = x.double()
    return (xd / xd.mean(dim=-2, keepdim=True)).to(x.dtype)


def ex1_wrong_floor_division(x):
    return x // x.sum(dim=-2, keepdim=True)


def ex1_right_unsqueeze(x):
    totals = torch.sum(x, dim=-2).unsqueeze(-2)  # (..., 1, N)
    return x * totals.reciprocal()


def ex1_right_transpose_twice(x):
    xt = x.transpose(-1, -2)
    return (xt / xt.sum(-1, keepdim=True)).transpose(-1, -2)


def ex1_right_float64(x):
    xd = x.to(torch.float64)
    return (xd / xd.sum(dim=-2, keepdim=True)).to(x.dtype)


# ---------------------------------------------------------------- ex2: head_scores


def ex2_wrong_no_head_move(q, k):
    return q @ k.transpose(-2, -1)


def ex2_wrong_einsum_st_swapped(q, k):
    return torch.einsum("bthd,bshd->bhst", q, k)


def ex2_wrong_einsum_heads_not_moved(q, k):
    return torch.einsum("bthd,bshd->bths", q, k)


def ex2_wrong_reshape_heads(q, k):
    B, T, H, D = q.shape
    S = k.shape[1]
    qh = q.reshape(B, H, T, D)
    kh = k.reshape(B, H, S, D)
    return qh @ kh.transpose(-2, -1)


def ex2_wrong_view_heads(q, k):
    B, T, H, D = q.shape
    S = k.shape[1]
    return q.view(B, H, T, D) @ k.view(B, H, D, S)


def ex2_wrong_scaled(q, k):
    D = q.shape[-1]
    return q.transpose(1, 2) @ k.permute(0, 2, 3, 1) / D**0.5


def ex2_wrong_stack_last(q, k):
    heads = [q[:, :, h] @ k[:, :, h].transpose(-2, -1) for h in range(q.shape[2])]
    return torch.stack(heads, dim=-1)


def ex2_wrong_half(q, k):
    qh = q.half().transpose(1, 2)
    kh = k.half().permute(0, 2, 3, 1)
    return (qh @ kh).to(q.dtype)  # half precision to save memory


def ex2_wrong_all_heads_summed(q, k):
    B, T, H, D = q.shape
    S = k.shape[1]
    scores = q.reshape(B, T, H * D) @ k.reshape(B, S, H * D).transpose(1, 2)  # (B, T, S)
    return scores.unsqueeze(1).expand(B, H, T, S)


def ex2_wrong_float64_swapped(q, k):
    scores = torch.einsum("bshd,bthd->bhts", q.double(), k.double())
    return scores.to(q.dtype)


def ex2_right_einsum(q, k):
    return torch.einsum("bthd,bshd->bhts", q, k)


def ex2_right_broadcast(q, k):
    prod = q[:, :, None] * k[:, None]  # (B, T, S, H, D)
    return prod.sum(-1).permute(0, 3, 1, 2)  # (B, H, T, S)


def ex2_right_permute(q, k):
    qh = q.permute(0, 2, 1, 3)
    kh = k.permute(0, 2, 1, 3)
    return torch.matmul(qh, kh.mT)


# ---------------------------------------------------------------- ex3: mix_positions


def ex3_wrong_weight_transposed(x, weight, bias):
    return weight.T @ x + bias[:, None]


def ex3_wrong_bias_along_channels(x, weight, bias):
    return weight @ x + bias


def ex3_wrong_mixes_channels(x, weight, bias):
    return x @ weight.T + bias


def ex3_wrong_no_bias(x, weight, bias):
    return weight @ x


def ex3_wrong_not_transposed_back(x, weight, bias):
    return x.transpose(-2, -1) @ weight.T + bias


def ex3_wrong_dot_t(x, weight, bias):
    return (x.T @ weight.T + bias).T


def ex3_wrong_einsum_weight_indices(x, weight, bias):
    return torch.einsum("tu,...tc->...uc", weight, x) + bias[:, None]


def ex3_wrong_channel_loop(x, weight, bias):
    cols = [weight @ x[:, c] + bias for c in range(x.shape[1])]
    return torch.stack(cols, dim=1)


def ex3_wrong_mean(x, weight, bias):
    prod = weight[:, :, None] * x.unsqueeze(-3)  # (..., T_out, T, C)
    return prod.mean(dim=-2) + bias[:, None]


def ex3_wrong_bias_before(x, weight, bias):
    return weight @ (x + bias[:, None])


def ex3_right_einsum(x, weight, bias):
    return torch.einsum("ut,...tc->...uc", weight, x) + bias[:, None]


def ex3_right_transpose(x, weight, bias):
    return (x.transpose(-1, -2) @ weight.T + bias).transpose(-1, -2)


def ex3_right_tensordot(x, weight, bias):
    out = torch.tensordot(weight, x, dims=([1], [x.dim() - 2]))  # (T_out, ..., C)
    return torch.movedim(out, 0, -2) + bias.unsqueeze(-1)


# ---------------------------------------------------------------- ex4: masked_cross_entropy


def _picked(logits, targets):
    log_p = torch.log_softmax(logits, dim=-1)
    return log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)


def ex4_wrong_zeroed_mean(logits, targets, mask):
    return -(_picked(logits, targets) * mask).mean()


def ex4_wrong_log_of_softmax(logits, targets, mask):
    p = torch.softmax(logits, dim=-1)
    picked = torch.log(p).gather(-1, targets[..., None])[..., 0]
    return -picked[mask].mean()


def ex4_wrong_no_minus(logits, targets, mask):
    return _picked(logits, targets)[mask].mean()


def ex4_wrong_mask_inverted(logits, targets, mask):
    return -_picked(logits, targets)[~mask].mean()


def ex4_wrong_sum(logits, targets, mask):
    return -_picked(logits, targets)[mask].sum()


def ex4_wrong_mean_of_row_means(logits, targets, mask):
    picked = _picked(logits, targets) * mask
    per_row = picked.sum(dim=1) / mask.sum(dim=1)
    return -per_row.mean()


def ex4_wrong_no_max_subtracted(logits, targets, mask):
    log_p = logits - logits.exp().sum(dim=-1, keepdim=True).log()
    picked = log_p.gather(-1, targets[..., None])[..., 0]
    return -picked[mask].mean()


def ex4_wrong_softmax_over_positions(logits, targets, mask):
    log_p = F.log_softmax(logits, dim=1)
    picked = log_p.gather(2, targets.unsqueeze(2)).squeeze(2)
    return -picked[mask].mean()


def ex4_wrong_item(logits, targets, mask):
    return -_picked(logits, targets)[mask].mean().item()


def ex4_wrong_float64_ignores_mask(logits, targets, mask):
    log_p = logits.double().log_softmax(-1)
    picked = log_p.gather(-1, targets[..., None])[..., 0]
    return (-picked.mean()).to(logits.dtype)


def ex4_right_flatten(logits, targets, mask):
    V = logits.shape[-1]
    log_p = F.log_softmax(logits.reshape(-1, V), dim=-1)  # (B·T, V)
    flat_t = targets.reshape(-1)
    picked = log_p[torch.arange(flat_t.numel()), flat_t]
    m = mask.reshape(-1).to(log_p.dtype)
    return -(picked * m).sum() / m.sum()


def ex4_right_logsumexp(logits, targets, mask):
    target_logit = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    losses = torch.logsumexp(logits, dim=-1) - target_logit  # (B, T)
    return torch.where(mask, losses, torch.zeros_like(losses)).sum() / mask.sum()


def ex4_right_masked_select(logits, targets, mask):
    losses = -_picked(logits, targets)
    return torch.masked_select(losses, mask).mean()


# ---------------------------------------------------------------- ex5: elementwise_derivative


def ex5_wrong_input_requires_grad(f, x):
    x.requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def ex5_wrong_backward_non_scalar(f, x):
    xr = x.detach().clone().requires_grad_(True)
    f(xr).backward()
    return xr.grad


def ex5_wrong_mean(f, x):
    xr = x.detach().clone().requires_grad_(True)
    f(xr).mean().backward()
    return xr.grad


def ex5_wrong_finite_difference(f, x):
    h = 1e-2
    return (f(x + h) - f(x)) / h


def ex5_wrong_returns_original_grad(f, x):
    xr = x.detach().clone().requires_grad_(True)
    f(xr).sum().backward()
    return x.grad


def ex5_wrong_jacobian(f, x):
    return torch.autograd.functional.jacobian(f, x)


def ex5_wrong_jacobian_diagonal(f, x):
    return torch.autograd.functional.jacobian(f, x).diagonal()


def ex5_wrong_float32(f, x):
    xr = x.float().requires_grad_(True)
    f(xr).sum().backward()
    return xr.grad


def ex5_wrong_no_grad(f, x):
    xr = x.detach().clone().requires_grad_(True)
    with torch.no_grad():
        y = f(xr)
    y.sum().backward()
    return xr.grad


def ex5_wrong_backward_twice(f, x):
    xr = x.clone().detach().requires_grad_(True)
    y = f(xr).sum()
    y.backward(retain_graph=True)  # a first look at the derivative
    y.backward()
    return xr.grad


def ex5_right_autograd_grad(f, x):
    xr = x.detach().requires_grad_()
    return torch.autograd.grad(f(xr).sum(), xr)[0]


def ex5_right_ones_like(f, x):
    xr = x.clone().requires_grad_(True)
    y = f(xr)
    y.backward(torch.ones_like(y))
    return xr.grad.detach()


def ex5_right_enable_grad(f, x):
    with torch.enable_grad():
        leaf = torch.tensor(x.tolist(), dtype=x.dtype, requires_grad=True)
        f(leaf).sum().backward()
    return leaf.grad.reshape(x.shape)


# ---------------------------------------------------------------- ex6: accumulated_step


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
        total += loss.item()
    opt.step()
    return total / len(batches)


def ex6_wrong_step_in_loop(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        opt.step()
        total += loss.item()
    return total / len(batches)


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
    n_tokens = sum(t.numel() for t, _ in batches)
    total = 0.0
    for tokens, targets in batches:
        logits = model(tokens)
        loss_sum = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum"
        )
        (loss_sum / n_tokens).backward()
        total += loss_sum.item() / n_tokens
    opt.step()
    return total


def ex6_wrong_unflattened(model, opt, batches):
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
    mean_loss = torch.stack(losses).mean()
    mean_loss.backward()
    opt.step()
    return mean_loss.item()


def ex6_wrong_zero_grad_after_step(model, opt, batches):
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        total += loss.item() / len(batches)
    opt.step()
    opt.zero_grad()
    return total


def ex6_wrong_last_loss(model, opt, batches):
    opt.zero_grad()
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        (loss / len(batches)).backward()
    opt.step()
    return loss.item()


def ex6_wrong_model_zero_grad_not_divided(model, opt, batches):
    model.zero_grad(set_to_none=True)
    total = 0.0
    for tokens, targets in batches:
        logits = model(tokens).transpose(1, 2)  # (B, V, T): classes second
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        total += loss.item()
    opt.step()
    return total / len(batches)


def ex6_right_model_zero_grad(model, opt, batches):
    model.zero_grad(set_to_none=True)
    k = len(batches)
    losses = []
    for tokens, targets in batches:
        logits = model(tokens).transpose(1, 2)  # (B, V, T): classes second
        loss = F.cross_entropy(logits, targets)
        loss.div(k).backward()
        losses.append(loss.item())
    opt.step()
    return sum(losses) / k


def ex6_right_scale_grads(model, opt, batches):
    opt.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = _batch_loss(model, tokens, targets)
        loss.backward()
        total += loss.item()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.grad /= len(batches)
    opt.step()
    return total / len(batches)


E1, E2, E3 = "ex1_normalise_columns", "ex2_head_scores", "ex3_mix_positions"
E4, E5, E6 = "ex4_masked_cross_entropy", "ex5_elementwise_derivative", "ex6_accumulated_step"

ENTRIES = [
    # ex1
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
        "summed over dim 0, which is the batch for a batch",
        ex1_wrong_dim0,
        named=(
            "summed along dim 0, which is the columns of one matrix but the batch of a (B, "
            "T, N) tensor"
        ),
    ),
    Entry(
        E1,
        "divided by the total of the whole tensor",
        ex1_wrong_global,
        named="divided by the total of the whole tensor",
    ),
    Entry(
        E1,
        "transposed to use rows but never transposed back",
        ex1_wrong_forgot_transpose_back,
        named="normalised the rows of the transposed matrix and returned it still transposed",
    ),
    Entry(
        E1,
        "divided x in place with /=",
        ex1_wrong_in_place,
        named="divided x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "used softmax down the columns",
        ex1_wrong_softmax,
        named="exponentiated the entries before normalising (a softmax)",
    ),
    Entry(
        E1,
        "a loop over x.shape[1] that only works for a matrix",
        ex1_wrong_loop_2d,
        named="looped over x[:, j] as the columns, which they are only for a single (T, N) matrix",
    ),
    Entry(
        E1,
        "in float64, divided by the column mean",
        ex1_wrong_float64_mean,
        named="divided by each column's mean, not its total",
    ),
    Entry(
        E1,
        "used // to divide",
        ex1_wrong_floor_division,
        named="divided with //, which rounds every share down to a whole number",
    ),
    Entry(E1, "sum without keepdim, then unsqueeze and reciprocal", ex1_right_unsqueeze, True),
    Entry(E1, "transpose, normalise rows, transpose back", ex1_right_transpose_twice, True),
    Entry(E1, "in float64, cast back", ex1_right_float64, True),
    # ex2
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
        "einsum with the output's T and S swapped",
        ex2_wrong_einsum_st_swapped,
        named="put the keys first: the result is (B, H, S, T)",
    ),
    Entry(
        E2,
        "einsum that leaves the heads in third place",
        ex2_wrong_einsum_heads_not_moved,
        named="left the heads after the queries: the result is (B, T, H, S)",
    ),
    Entry(
        E2,
        "reshaped to (B, H, T, D) instead of transposing",
        ex2_wrong_reshape_heads,
        named="reshaped to (B, H, T, D) instead of swapping dimensions 1 and 2",
    ),
    Entry(
        E2,
        "view to (B, H, T, D) and (B, H, D, S)",
        ex2_wrong_view_heads,
        named="reshaped q to (B, H, T, D) and the keys straight to (B, H, D, S)",
    ),
    Entry(
        E2,
        "divided by sqrt(D) as attention does",
        ex2_wrong_scaled,
        named="divided the scores by \u221aD",
    ),
    Entry(
        E2,
        "a loop over heads, stacked on the last dim",
        ex2_wrong_stack_last,
        named="put the heads last: the result is (B, T, S, H)",
    ),
    Entry(
        E2,
        "computed in float16 to save memory",
        ex2_wrong_half,
        named="computed the scores in 16-bit floats (float16 or bfloat16)",
    ),
    Entry(
        E2,
        "dot product over all heads at once, copied per head",
        ex2_wrong_all_heads_summed,
        named="took one dot product over all heads together and copied it to every head",
    ),
    Entry(
        E2,
        "float64 einsum with q and k swapped",
        ex2_wrong_float64_swapped,
        named="put the keys first: the result is (B, H, S, T)",
    ),
    Entry(E2, "einsum bthd,bshd->bhts", ex2_right_einsum, True),
    Entry(E2, "broadcast product summed over D, then permute", ex2_right_broadcast, True),
    Entry(E2, "permute both, matmul with .mT", ex2_right_permute, True),
    # ex3
    Entry(
        E3,
        "used weight.T as nn.Linear's forward does",
        ex3_wrong_weight_transposed,
        named="used the weight the wrong way round (its transpose)",
    ),
    Entry(
        E3,
        "added the bias without making it a column",
        ex3_wrong_bias_along_channels,
        named="added the bias along the channels instead of the positions",
    ),
    Entry(
        E3,
        "x @ weight.T + bias: mixed the channels",
        ex3_wrong_mixes_channels,
        named=(
            "applied the layer to the channels (the last dimension), as nn.Linear does by default"
        ),
    ),
    Entry(E3, "forgot the bias", ex3_wrong_no_bias, named="left out the bias"),
    Entry(
        E3,
        "transposed x but not the result back",
        ex3_wrong_not_transposed_back,
        named="moved the positions to the last dimension and did not move them back",
    ),
    Entry(
        E3,
        "used .T, which only works for a matrix",
        ex3_wrong_dot_t,
        named=(
            "transposed x with .T, which reverses every dimension of a batch, not only the last two"
        ),
    ),
    Entry(
        E3,
        "einsum reading weight as (T, T_out)",
        ex3_wrong_einsum_weight_indices,
        named="read the weight as (T, T_out), the wrong way round (its transpose)",
    ),
    Entry(
        E3,
        "a loop over channels that assumes a matrix",
        ex3_wrong_channel_loop,
        named=(
            "looped over x[:, c] as the channels, which they are only for a single (T, C) sequence"
        ),
    ),
    Entry(
        E3,
        "averaged over the positions instead of summing",
        ex3_wrong_mean,
        named="averaged the weighted positions instead of adding them up",
    ),
    Entry(
        E3,
        "added the bias to x before the weight",
        ex3_wrong_bias_before,
        named="added the bias before multiplying by the weight",
    ),
    Entry(E3, "einsum ut,...tc->...uc", ex3_right_einsum, True),
    Entry(E3, "transpose, linear layer by hand, transpose back", ex3_right_transpose, True),
    Entry(E3, "tensordot then movedim", ex3_right_tensordot, True),
    # ex4
    Entry(
        E4,
        "zeroed the padding but divided by B·T",
        ex4_wrong_zeroed_mean,
        named="zeroed the padding's losses but divided by the number of all positions",
    ),
    Entry(
        E4,
        "log of softmax instead of log_softmax",
        ex4_wrong_log_of_softmax,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(E4, "forgot the minus sign", ex4_wrong_no_minus, named="forgot the minus sign"),
    Entry(
        E4,
        "kept the padding and dropped the real tokens",
        ex4_wrong_mask_inverted,
        named="used the mask the wrong way round (True as padding)",
    ),
    Entry(
        E4,
        "summed the losses instead of averaging",
        ex4_wrong_sum,
        named="added up the counted positions' losses instead of averaging them",
    ),
    Entry(
        E4,
        "mean of each sequence, then the mean of those",
        ex4_wrong_mean_of_row_means,
        named="averaged each sequence on its own, then averaged the sequences",
    ),
    Entry(
        E4,
        "log-softmax by hand without subtracting the max",
        ex4_wrong_no_max_subtracted,
        named="formed the probabilities (or e to the logits) before taking the log",
    ),
    Entry(
        E4,
        "log_softmax over dim=1, the positions",
        ex4_wrong_softmax_over_positions,
        named="normalised over the positions (dim 1), not over the classes",
    ),
    Entry(
        E4,
        "returned .item(), a Python float",
        ex4_wrong_item,
        named="returned a Python number (.item()), not the loss as a 0-D tensor",
    ),
    Entry(
        E4,
        "in float64, and averaged over the padding too",
        ex4_wrong_float64_ignores_mask,
        named="averaged over every position, padding included",
    ),
    Entry(E4, "flattened to (B·T, V), weighted sum over the mask", ex4_right_flatten, True),
    Entry(E4, "logsumexp minus the target's logit", ex4_right_logsumexp, True),
    Entry(E4, "masked_select then mean", ex4_right_masked_select, True),
    # ex5
    Entry(
        E5,
        "set requires_grad on the x I was given",
        ex5_wrong_input_requires_grad,
        named="made the x you were given require gradients, instead of a copy",
    ),
    Entry(
        E5,
        "called backward() on f(x) itself, not a number",
        ex5_wrong_backward_non_scalar,
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
        "a finite difference with h = 0.01",
        ex5_wrong_finite_difference,
        named="estimated the slopes with a finite difference",
    ),
    Entry(
        E5,
        "returned x.grad of the original x",
        ex5_wrong_returns_original_grad,
        named="returned a .grad that backward() never filled (it is None)",
    ),
    Entry(
        E5,
        "returned the whole Jacobian",
        ex5_wrong_jacobian,
        named="returned the whole Jacobian, every output against every input",
    ),
    Entry(
        E5,
        "the Jacobian's diagonal, only right for a vector",
        ex5_wrong_jacobian_diagonal,
        named="took the Jacobian's diagonal, which holds the derivatives only when x is a vector",
    ),
    Entry(
        E5,
        "turned x into float32 first",
        ex5_wrong_float32,
        named="turned x into float32 (or a smaller float) before differentiating",
    ),
    Entry(
        E5,
        "computed f under torch.no_grad()",
        ex5_wrong_no_grad,
        named="called f under torch.no_grad(), so nothing was recorded",
    ),
    Entry(
        E5,
        "called backward twice (once to print)",
        ex5_wrong_backward_twice,
        named="ran backward() twice, so the gradients added up",
    ),
    Entry(E5, "torch.autograd.grad of the sum", ex5_right_autograd_grad, True),
    Entry(E5, "clone, backward with ones_like", ex5_right_ones_like, True),
    Entry(E5, "a fresh leaf from tolist under enable_grad", ex5_right_enable_grad, True),
    # ex6
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
        "returned the sum of the losses",
        ex6_wrong_returns_sum,
        named="returned the sum of the batches' losses, not their mean",
    ),
    Entry(
        E6,
        "averaged over all tokens of all batches",
        ex6_wrong_token_weighted,
        named="weighted each batch by its number of tokens",
    ),
    Entry(
        E6,
        "cross_entropy on (B, T, V) without flattening",
        ex6_wrong_unflattened,
        named="passed the (B, T, V) logits to F.cross_entropy without flattening them",
    ),
    Entry(
        E6,
        "stacked the losses and called backward once",
        ex6_wrong_one_backward,
        named="added all the batches' losses into one graph and called backward() once",
    ),
    Entry(
        E6,
        "zero_grad after the step instead of before",
        ex6_wrong_zero_grad_after_step,
        named="cleared the gradients after step(), not before the first backward()",
    ),
    Entry(
        E6,
        "returned the last batch's loss",
        ex6_wrong_last_loss,
        named="returned the last batch's loss, not the mean of all of them",
    ),
    Entry(
        E6,
        "model.zero_grad, transpose, not divided by k",
        ex6_wrong_model_zero_grad_not_divided,
        named="averaged the loss you return but not the gradients",
    ),
    Entry(E6, "model.zero_grad, transpose(1, 2), loss.div(k)", ex6_right_model_zero_grad, True),
    Entry(E6, "full backward per batch, grads divided by k", ex6_right_scale_grads, True),
]
