"""Corpus b for notebook 09 (a full encoder–decoder), written blind from the learner's edition."""

import heapq
import math

import numpy as np
import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: smoothed_loss


def ex1_wrong_spread_over_all(logits, target, smoothing, pad_id):
    # §4's smoothing: ε / V on every token, <pad> included
    V = logits.shape[-1]
    log_p = F.log_softmax(logits, dim=-1)
    q = torch.full_like(log_p, smoothing / V)
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing + smoothing / V)
    loss = -(q * log_p).sum(-1)
    keep = target != pad_id
    return loss[keep].mean()


def ex1_wrong_share_v_minus_1(logits, target, smoothing, pad_id):
    V = logits.size(-1)
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 1))  # every token but the right one
    q.scatter_(-1, target[..., None], 1 - smoothing)
    q[..., pad_id] = 0
    loss = -(q * log_p).sum(-1)
    return loss[target != pad_id].mean()


def ex1_wrong_pad_column_kept(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    loss = -(q * log_p).sum(dim=-1)
    return loss[target != pad_id].mean()


def ex1_wrong_log_of_softmax(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = torch.log(torch.softmax(logits, dim=-1))
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0.0
    loss = -(q * log_p).sum(dim=-1)
    return loss[target != pad_id].mean()


def ex1_wrong_mean_over_all(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0.0
    return -(q * log_p).sum(dim=-1).mean()


def ex1_wrong_divide_by_all_positions(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0.0
    mask = (target != pad_id).float()
    loss = -(q * log_p).sum(dim=-1) * mask
    return loss.sum() / target.numel()


def ex1_wrong_softmax_over_time(logits, target, smoothing, pad_id):
    V = logits.shape[2]
    log_p = F.log_softmax(logits, dim=1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(2, target.unsqueeze(2), 1 - smoothing)
    q[:, :, pad_id] = 0.0
    loss = -(q * log_p).sum(dim=2)
    return loss[target != pad_id].mean()


def ex1_wrong_mean_per_sentence(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0.0
    mask = target != pad_id
    loss = -(q * log_p).sum(dim=-1) * mask
    per_sentence = loss.sum(dim=1) / mask.sum(dim=1)  # each sentence's mean
    return per_sentence.mean()


def ex1_wrong_no_max_shift(logits, target, smoothing, pad_id):
    # log-softmax by hand, as in numpy
    log_p = logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))
    V = logits.shape[-1]
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0.0
    loss = -(q * log_p).sum(dim=-1)
    return loss[target != pad_id].mean()


def ex1_wrong_pad_is_zero(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., 0] = 0.0  # <pad> is id 0
    loss = -(q * log_p).sum(dim=-1)
    return loss[target != 0].mean()


def ex1_right_decomposed(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits - logits.logsumexp(dim=-1, keepdim=True)  # (B, T, V)
    nll_right = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    nll_all = -log_p.sum(dim=-1)
    nll_others = nll_all - nll_right + log_p[..., pad_id]  # neither the right token nor <pad>
    loss = (1 - smoothing) * nll_right + smoothing / (V - 2) * nll_others
    real = target != pad_id
    return loss.masked_select(real).sum() / real.sum()


def ex1_right_one_hot_flat(logits, target, smoothing, pad_id):
    V = logits.size(-1)
    flat_logits, flat_target = logits.reshape(-1, V), target.reshape(-1)
    keep = flat_target != pad_id
    flat_logits, flat_target = flat_logits[keep], flat_target[keep]
    one_hot = F.one_hot(flat_target, V).to(logits.dtype)
    others = torch.ones_like(one_hot) - one_hot
    others[:, pad_id] = 0
    q = (1 - smoothing) * one_hot + smoothing * others / others.sum(dim=1, keepdim=True)
    return torch.sum(-q * torch.log_softmax(flat_logits, dim=1)) / flat_target.numel()


# ---------------------------------------------------------- Exercise 2: warmup_linear_decay


def ex2_wrong_decay_from_step_1(step, peak_lr, warmup, n_steps, floor):
    # §6's schedule, with the floor as a parameter
    return peak_lr * min(step / warmup, 1.0) * max(floor, 1.0 - (step - 1) / n_steps)


def ex2_wrong_falls_to_zero_then_clamps(step, peak_lr, warmup, n_steps, floor):
    rise = step / warmup
    fall = 1 - (step - warmup) / (n_steps - warmup)  # down to 0 at n_steps
    return peak_lr * min(rise, max(floor, fall))


def ex2_wrong_floor_under_warmup(step, peak_lr, warmup, n_steps, floor):
    rise = step / warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * max(floor, min(rise, fall))


def ex2_wrong_counts_from_0(step, peak_lr, warmup, n_steps, floor):
    s = step - 1  # the loop's index
    if s < warmup:
        return peak_lr * s / warmup
    if s < n_steps:
        return peak_lr * (1 - (1 - floor) * (s - warmup) / (n_steps - warmup))
    return floor * peak_lr


def ex2_wrong_decay_over_n_steps(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    lr = peak_lr * (1 - (1 - floor) * (step - warmup) / n_steps)
    return max(lr, floor * peak_lr)


def ex2_wrong_floor_not_scaled(step, peak_lr, warmup, n_steps, floor):
    if step >= n_steps:
        return floor
    if step < warmup:
        return peak_lr * step / warmup
    frac = (step - warmup) / (n_steps - warmup)
    return peak_lr + (floor * peak_lr - peak_lr) * frac


def ex2_wrong_integer_division(step, peak_lr, warmup, n_steps, floor):
    rise = step // warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * min(rise, max(floor, fall))


def ex2_wrong_cosine(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    if step > n_steps:
        return peak_lr * floor
    progress = (step - warmup) / (n_steps - warmup)
    return peak_lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def ex2_wrong_no_floor_after_end(step, peak_lr, warmup, n_steps, floor):
    rise = step / warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * min(rise, fall)


def ex2_wrong_inverse_sqrt_tail(step, peak_lr, warmup, n_steps, floor):
    # the paper's shape, rescaled to peak_lr, with the floor
    return peak_lr * max(floor, min(step / warmup, (warmup / step) ** 0.5))


def ex2_right_piecewise(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    if step >= n_steps:
        return peak_lr * floor
    slope = (peak_lr - floor * peak_lr) / (n_steps - warmup)
    return peak_lr - slope * (step - warmup)


def ex2_right_interp(step, peak_lr, warmup, n_steps, floor):
    return float(np.interp(step, [0, warmup, n_steps], [0.0, peak_lr, floor * peak_lr]))


def ex2_right_lerp(step, peak_lr, warmup, n_steps, floor):
    low = floor * peak_lr
    if step < warmup:
        return step * peak_lr / warmup
    t = min(1.0, (step - warmup) / (n_steps - warmup))
    return (1 - t) * peak_lr + t * low


# ------------------------------------------------------------- Exercise 3: beam_search_gnmt


def _next_log_probs(model, tokens, bos_id, memory, src_mask):
    logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
    return logits[0, -1].log_softmax(-1).tolist()


def _gnmt(total, n, alpha):
    return total / ((5 + n) / 6) ** alpha


def _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, key=None):
    """The right search loop, pruning by `key` (raw sums unless told)."""
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
            else:
                lp = _next_log_probs(model, toks, bos_id, memory, src_mask)
                cands.extend(([*toks, v], s + x) for v, x in enumerate(lp))
        cands.sort(key=key or (lambda c: c[1]), reverse=True)
        beams = cands[:beam_size]
        if all(t[-1] == eos_id for t, _ in beams):
            break
    return beams


def ex3_wrong_prune_by_normalised(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(
        model,
        src,
        bos_id,
        eos_id,
        max_new_tokens,
        beam_size,
        key=lambda c: _gnmt(c[1], len(c[0]), alpha),
    )
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_wrong_length_without_eos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def score(toks, s):
        n = len(toks) - 1 if toks[-1] == eos_id else len(toks)  # <eos> is not a word
        return s / ((5 + n) / 6) ** alpha

    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size)
    toks, s = max(beams, key=lambda c: score(*c))
    return toks, score(toks, s)


def ex3_wrong_precedence(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size)
    scored = [(s / (5 + len(t)) / 6**alpha, t) for t, s in beams]
    best = max(scored, key=lambda p: p[0])
    return best[1], best[0]


def ex3_wrong_length_power(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    # attnlib's |y|^α from §8
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size)
    toks, s = max(beams, key=lambda c: c[1] / len(c[0]) ** alpha)
    return toks, s / len(toks) ** alpha


def ex3_wrong_extends_finished(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            lp = _next_log_probs(model, toks, bos_id, memory, src_mask)
            cands += [([*toks, v], s + x) for v, x in enumerate(lp)]
        beams = sorted(cands, key=lambda c: c[1], reverse=True)[:beam_size]
        if all(eos_id in t for t, _ in beams):
            break
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_wrong_finished_set_aside(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    # finished hypotheses leave the beam; the beam keeps beam_size open ones
    memory, src_mask, _ = model.encode(src)
    beams, finished = [([], 0.0)], []
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            lp = _next_log_probs(model, toks, bos_id, memory, src_mask)
            cands += [([*toks, v], s + x) for v, x in enumerate(lp)]
        cands.sort(key=lambda c: c[1], reverse=True)
        beams = []
        for toks, s in cands:
            if toks[-1] == eos_id:
                finished.append((toks, s))
            else:
                beams.append((toks, s))
            if len(beams) == beam_size:
                break
        if len(finished) >= beam_size:
            break
    toks, s = max(finished + beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_wrong_logits_as_log_probs(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
                continue
            logits, _, _ = model.decode(torch.tensor([[bos_id, *toks]]), memory, src_mask)
            cands += [([*toks, v], s + x) for v, x in enumerate(logits[0, -1].tolist())]
        beams = sorted(cands, key=lambda c: c[1], reverse=True)[:beam_size]
        if all(t[-1] == eos_id for t, _ in beams):
            break
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_wrong_raw_score_returned(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size)
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, s


def ex3_wrong_stop_when_best_ends(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
                continue
            lp = _next_log_probs(model, toks, bos_id, memory, src_mask)
            cands += [([*toks, v], s + x) for v, x in enumerate(lp)]
        beams = sorted(cands, key=lambda c: c[1], reverse=True)[:beam_size]
        if beams[0][0][-1] == eos_id:  # the best one is done
            break
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_wrong_last_token_only(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
                continue
            last = toks[-1] if toks else bos_id
            logits, _, _ = model.decode(torch.tensor([[last]]), memory, src_mask)
            lp = logits[0, -1].log_softmax(-1).tolist()
            cands += [([*toks, v], s + x) for v, x in enumerate(lp)]
        beams = sorted(cands, key=lambda c: c[1], reverse=True)[:beam_size]
        if all(t[-1] == eos_id for t, _ in beams):
            break
    toks, s = max(beams, key=lambda c: _gnmt(c[1], len(c[0]), alpha))
    return toks, _gnmt(s, len(toks), alpha)


def ex3_right_batched(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    hyps, sums = [[]], torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        done = [bool(h) and h[-1] == eos_id for h in hyps]
        open_rows = [i for i, d in enumerate(done) if not d]
        if not open_rows:
            break
        prefixes = torch.tensor([[bos_id, *hyps[i]] for i in open_rows])
        n = len(open_rows)
        logits, _, _ = model.decode(
            prefixes, memory.expand(n, -1, -1), src_mask.expand(n, -1, -1, -1)
        )
        log_p = logits[:, -1].log_softmax(-1).double()  # (n, V)
        cand_tokens, cand_sums, row = [], [], 0
        for i, d in enumerate(done):  # candidates in beam order, as a list would have them
            if d:
                cand_tokens.append(hyps[i])
                cand_sums.append(sums[i : i + 1])
            else:
                cand_tokens += [[*hyps[i], v] for v in range(log_p.shape[1])]
                cand_sums.append(sums[i] + log_p[row])
                row += 1
        all_sums = torch.cat(cand_sums)
        order = torch.sort(all_sums, descending=True, stable=True).indices[:beam_size]
        hyps, sums = [cand_tokens[j] for j in order.tolist()], all_sums[order]
    lengths = torch.tensor([len(h) for h in hyps], dtype=torch.float64)
    normalised = sums / ((5 + lengths) / 6) ** alpha
    best = int(normalised.argmax())
    return hyps[best], float(normalised[best])


def ex3_right_heapq(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, mask, _ = model.encode(src)
    beam = [(0.0, ())]
    for _step in range(max_new_tokens):
        pool = []
        for total, seq in beam:
            if seq and seq[-1] == eos_id:
                pool.append((total, seq))
                continue
            out, _, _ = model.decode(torch.tensor([(bos_id, *seq)]), memory, mask)
            for token, lp in enumerate(torch.log_softmax(out[0, -1], dim=-1).tolist()):
                pool.append((total + lp, (*seq, token)))
        beam = heapq.nlargest(beam_size, pool, key=lambda item: item[0])
        if all(seq[-1] == eos_id for _, seq in beam):
            break
    penalty = [((5 + len(seq)) / 6) ** alpha for _, seq in beam]
    scores = [total / p for (total, _), p in zip(beam, penalty, strict=True)]
    i = max(range(len(beam)), key=scores.__getitem__)
    return list(beam[i][1]), scores[i]


E1, E2, E3 = "ex1_smoothed_loss", "ex2_warmup_linear_decay", "ex3_beam_search_gnmt"

ENTRIES = [
    Entry(
        E1,
        "spread ε / V over all tokens, <pad> included (§4's way)",
        ex1_wrong_spread_over_all,
        named="spread ε over all V tokens, as in the lesson, the right token and <pad> included",
    ),
    Entry(
        E1,
        "shared ε among V − 1 tokens, then zeroed <pad>",
        ex1_wrong_share_v_minus_1,
        named="gave each of the other tokens ε / (V − 1)",
    ),
    Entry(
        E1,
        "shared ε / (V − 2) but left <pad>'s column in",
        ex1_wrong_pad_column_kept,
        named="gave <pad> the same share ε / (V − 2) as the other wrong tokens",
    ),
    Entry(
        E1,
        "log of softmax: -inf for a confident model",
        ex1_wrong_log_of_softmax,
        named="took the logarithm of the softmax instead of log_softmax",
    ),
    Entry(
        E1,
        "averaged over every position, padding included",
        ex1_wrong_mean_over_all,
        named="averaged over every position, the padding included",
    ),
    Entry(
        E1,
        "masked the padding but divided by B·T",
        ex1_wrong_divide_by_all_positions,
        named="zeroed the padding positions but divided by the number of all positions",
    ),
    Entry(
        E1,
        "took the softmax over the time dimension",
        ex1_wrong_softmax_over_time,
        named="took the softmax along the positions (dim=1) instead of the tokens (the last dim)",
    ),
    Entry(
        E1,
        "averaged each sentence, then the sentences",
        ex1_wrong_mean_per_sentence,
        named="averaged each sequence first, then the sequences",
    ),
    Entry(
        E1,
        "log-softmax by hand without subtracting the max",
        ex1_wrong_no_max_shift,
        named="wrote log_softmax by hand without subtracting the largest logit first",
    ),
    Entry(
        E1,
        "hard-coded <pad> as id 0",
        ex1_wrong_pad_is_zero,
        named="treated token 0 as <pad> whatever pad_id is",
    ),
    Entry(E1, "split into right-token and other-token terms", ex1_right_decomposed, right=True),
    Entry(E1, "flattened, padding rows dropped, one_hot", ex1_right_one_hot_flat, right=True),
    Entry(
        E2,
        "§6's product: the decay starts at step 1",
        ex2_wrong_decay_from_step_1,
        named=(
            "multiplied the warm-up ramp by a decay that starts at the first step, as §6's "
            "loop does"
        ),
    ),
    Entry(
        E2,
        "the line falls to 0 at n_steps, clamped at the floor",
        ex2_wrong_falls_to_zero_then_clamps,
        named="let the falling line reach 0 at n_steps and cut it at the floor",
    ),
    Entry(
        E2,
        "the floor holds during the warm-up too",
        ex2_wrong_floor_under_warmup,
        named="held the rate at the floor or above during the warm-up too",
    ),
    Entry(
        E2,
        "counted steps from 0",
        ex2_wrong_counts_from_0,
        named="shifted the steps by one: the warm-up reaches the peak one step late",
    ),
    Entry(
        E2,
        "the decay spans n_steps, not n_steps − warmup",
        ex2_wrong_decay_over_n_steps,
        named="divided the decay by n_steps instead of by its length, n_steps − warmup",
    ),
    Entry(
        E2,
        "returned floor itself after n_steps",
        ex2_wrong_floor_not_scaled,
        named="treated floor as a learning rate instead of a fraction of peak_lr",
    ),
    Entry(
        E2,
        "step // warmup: integer division",
        ex2_wrong_integer_division,
        named="divided with // (whole numbers): the warm-up jumps instead of rising",
    ),
    Entry(
        E2,
        "a cosine decay instead of a straight line",
        ex2_wrong_cosine,
        named="decayed along a cosine after the warm-up instead of a straight line",
    ),
    Entry(
        E2,
        "no floor: the line keeps falling after n_steps",
        ex2_wrong_no_floor_after_end,
        named="left out the floor: the line keeps falling after n_steps",
    ),
    Entry(
        E2,
        "the paper's 1/√s tail after the warm-up",
        ex2_wrong_inverse_sqrt_tail,
        named="decayed as 1/√step after the warm-up, as the paper does",
    ),
    Entry(E2, "three ifs, a slope", ex2_right_piecewise, right=True),
    Entry(E2, "numpy.interp between the corners", ex2_right_interp, right=True),
    Entry(E2, "a lerp clamped at 1", ex2_right_lerp, right=True),
    Entry(
        E3,
        "pruned by the normalised score",
        ex3_wrong_prune_by_normalised,
        named="pruned the beam by the length-normalised score instead of the raw sum",
    ),
    Entry(
        E3, "|y| without the <eos>", ex3_wrong_length_without_eos, named="left the <eos> out of |y|"
    ),
    Entry(
        E3,
        "wrote s / (5 + |y|) / 6**α",
        ex3_wrong_precedence,
        named="raised only the 6 to the power α, not the whole fraction (5 + |y|) / 6",
    ),
    Entry(
        E3,
        "divided by |y|^α (attnlib's default)",
        ex3_wrong_length_power,
        named="divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α",
    ),
    Entry(
        E3,
        "kept extending hypotheses after their <eos>",
        ex3_wrong_extends_finished,
        named="kept extending hypotheses after their <eos>",
    ),
    Entry(
        E3,
        "set finished hypotheses aside, beam of open ones",
        ex3_wrong_finished_set_aside,
        named="moved the hypotheses that ended out of the beam, so that they no longer take a "
        "place",
    ),
    Entry(
        E3,
        "added the logits, not log-probabilities",
        ex3_wrong_logits_as_log_probs,
        named="added up raw logits instead of log-probabilities",
    ),
    Entry(
        E3,
        "returned the raw sum as the score",
        ex3_wrong_raw_score_returned,
        named="returned the raw sum as the score instead of the normalised score",
    ),
    Entry(
        E3,
        "stopped when the best hypothesis ended",
        ex3_wrong_stop_when_best_ends,
        named="stopped as soon as the best kept hypothesis ended, not when all of them had",
    ),
    Entry(
        E3,
        "gave decode only the last token",
        ex3_wrong_last_token_only,
        named="gave the decoder only the last token instead of <bos> and the whole prefix",
    ),
    Entry(E3, "open hypotheses decoded as one batch", ex3_right_batched, right=True),
    Entry(E3, "heapq.nlargest over tuples", ex3_right_heapq, right=True),
]
