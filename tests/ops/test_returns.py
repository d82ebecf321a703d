"""Returns, GAE, lambda-returns, n-step and Retrace targets against slow pure-Python
references."""

from __future__ import annotations

import functools

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

from jaxrl.ops import (
    discounted_returns,
    gae,
    lambda_returns,
    n_step_targets,
    retrace,
    reverse_discounted_cumsum,
)

RTOL = 1e-5
ATOL = 1e-5
SETTINGS = settings(max_examples=50, deadline=None)

# --------------------------------------------------------------------------------------------
# Slow references: plain loops over each env b, walking t backwards (or forwards for n-step).
# --------------------------------------------------------------------------------------------


def ref_gae(r, v, nv, term, trunc, gamma, lam):
    T, B = r.shape
    adv = np.zeros((T, B))
    for b in range(B):
        next_adv = 0.0
        for t in reversed(range(T)):
            bootstrap = 0.0 if term[t, b] else gamma * nv[t, b]
            delta = r[t, b] + bootstrap - v[t, b]
            if term[t, b] or trunc[t, b]:
                next_adv = 0.0
            adv[t, b] = delta + gamma * lam * next_adv
            next_adv = adv[t, b]
    return adv


def ref_lambda_returns(r, nv, term, trunc, gamma, lam):
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        for t in reversed(range(T)):
            if term[t, b]:
                out[t, b] = r[t, b]
            elif trunc[t, b] or t == T - 1:
                out[t, b] = r[t, b] + gamma * nv[t, b]
            else:
                tail = (1 - lam) * nv[t, b] + lam * out[t + 1, b]
                out[t, b] = r[t, b] + gamma * tail
    return out


def ref_discounted(r, term, trunc, gamma, boot=None):
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        running = 0.0
        for t in reversed(range(T)):
            if term[t, b]:
                running = r[t, b]
            elif trunc[t, b] or t == T - 1:
                running = r[t, b] + gamma * (0.0 if boot is None else boot[t, b])
            else:
                running = r[t, b] + gamma * running
            out[t, b] = running
    return out


def ref_retrace(r, q, nv, term, trunc, c, gamma):
    """ACER's backward pass (Wang et al. 2017, Algorithm 2) with episode ends: Q_ret restarts
    at r on a terminal step, at r + gamma V(final obs) on a truncation and at the rollout end,
    and otherwise carries c[t+1] (Q_ret[t+1] - Q[t+1]) + V(s_{t+1})."""
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        for t in reversed(range(T)):
            if term[t, b]:
                out[t, b] = r[t, b]
            elif trunc[t, b] or t == T - 1:
                out[t, b] = r[t, b] + gamma * nv[t, b]
            else:
                carried = c[t + 1, b] * (out[t + 1, b] - q[t + 1, b]) + nv[t, b]
                out[t, b] = r[t, b] + gamma * carried
    return out


def ref_n_step(r, nv, term, trunc, gamma, n):
    T, B = r.shape
    targets = np.zeros((T, B))
    discounts = np.zeros((T, B))
    for b in range(B):
        for t in range(T):
            total = 0.0
            for k in range(n):
                s = t + k
                total += gamma**k * r[s, b]
                if term[s, b]:
                    disc = 0.0
                    break
                if trunc[s, b] or s == T - 1 or k == n - 1:
                    disc = gamma ** (k + 1)
                    break
            targets[t, b] = total + disc * nv[s, b]
            discounts[t, b] = disc
    return targets, discounts


# --------------------------------------------------------------------------------------------
# Random rollouts. Flags are drawn densely enough that both-set steps and boundaries on the last
# step are common; ``consistent`` makes next_values[t] == values[t + 1] inside episodes.
# --------------------------------------------------------------------------------------------


def make_rollout(seed, T, B, p_term=0.2, p_trunc=0.2, consistent=False):
    rng = np.random.default_rng(seed)
    r = rng.normal(size=(T, B)).astype(np.float32)
    v = rng.normal(size=(T, B)).astype(np.float32)
    nv = rng.normal(size=(T, B)).astype(np.float32)
    term = rng.random((T, B)) < p_term
    trunc = rng.random((T, B)) < p_trunc
    if consistent:
        done = term | trunc
        nv[:-1] = np.where(done[:-1], nv[:-1], v[1:])
    return r, v, nv, term, trunc


T_MAX, B_MAX = 20, 4


def pad_rollout(rollout, seed):
    """Embeds a ``[T, B]`` rollout in a fixed ``[T_MAX, B_MAX]`` one (so jit compiles once).

    The extra rows/columns are fresh random data. ``truncated[T - 1]`` is set in the padded
    copy: bootstrapping at the rollout's last step is exactly bootstrapping at a truncation, so
    the first ``T`` rows of any estimator on the padded rollout equal the estimator on the
    original (checked without padding in ``test_last_step_is_a_truncation``).
    """
    T, B = rollout[0].shape
    padded = list(make_rollout(seed, T_MAX, B_MAX, p_term=0.2, p_trunc=0.2))
    for full, part in zip(padded, rollout):
        full[:T, :B] = part
    padded[4][T - 1, :B] = True
    return padded


@st.composite
def rollouts(draw):
    """``(rollout [T, B], padded [T_MAX, B_MAX])`` with T in 1..20, B in 1..4."""
    rollout = make_rollout(
        draw(st.integers(0, 2**31)),
        draw(st.integers(1, T_MAX)),
        draw(st.integers(1, B_MAX)),
        p_term=draw(st.sampled_from([0.0, 0.15, 0.5])),
        p_trunc=draw(st.sampled_from([0.0, 0.15, 0.5])),
    )
    return rollout, pad_rollout(rollout, draw(st.integers(0, 2**31)))


gammas = st.floats(0.0, 1.0)
lams = st.floats(0.0, 1.0)

# gamma/lam are traced, so these compile once per shape (and per static n / None-ness).
jit_gae = jax.jit(gae)
jit_lambda_returns = jax.jit(lambda_returns)
jit_discounted = jax.jit(discounted_returns)
jit_n_step = jax.jit(n_step_targets, static_argnames="n")


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=RTOL, atol=ATOL)


def check_padded(fn, ref, rollout, padded):
    """``fn`` on the padded rollout matches ``ref`` on it, and on the original in its corner."""
    T, B = rollout[0].shape
    out = fn(*padded)
    outs, refs_full = (out, ref(*padded)) if isinstance(out, tuple) else ((out,), (ref(*padded),))
    refs = ref(*rollout)
    refs = refs if isinstance(refs, tuple) else (refs,)
    for o, r_full, r in zip(outs, refs_full, refs):
        assert o.shape == (T_MAX, B_MAX) and o.dtype == jnp.float32
        close(o, r_full)
        close(np.asarray(o)[:T, :B], r)


# --------------------------------------------------------------------------------------------
# Property tests against the references.
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(data=rollouts(), gamma=gammas, lam=lams)
def test_gae_matches_reference(data, gamma, lam):
    check_padded(
        lambda r, v, nv, te, tr: jit_gae(r, v, nv, te, tr, gamma, lam),
        lambda r, v, nv, te, tr: ref_gae(r, v, nv, te, tr, gamma, lam),
        *data,
    )


@SETTINGS
@given(data=rollouts(), gamma=gammas, lam=lams)
def test_lambda_returns_matches_reference(data, gamma, lam):
    check_padded(
        lambda r, v, nv, te, tr: jit_lambda_returns(r, nv, te, tr, gamma, lam),
        lambda r, v, nv, te, tr: ref_lambda_returns(r, nv, te, tr, gamma, lam),
        *data,
    )


@SETTINGS
@given(seed=st.integers(0, 2**31), gamma=gammas, lam=lams)
def test_lambda_returns_equal_gae_plus_values(seed, gamma, lam):
    r, v, nv, term, trunc = make_rollout(seed, T_MAX, B_MAX, consistent=True)
    adv = jit_gae(r, v, nv, term, trunc, gamma, lam)
    close(jit_lambda_returns(r, nv, term, trunc, gamma, lam), np.asarray(adv) + v)


@SETTINGS
@given(data=rollouts(), gamma=gammas, with_bootstrap=st.booleans())
def test_discounted_returns_matches_reference(data, gamma, with_bootstrap):
    def fn(r, v, nv, te, tr):
        return jit_discounted(r, te, tr, gamma, nv if with_bootstrap else None)

    def ref(r, v, nv, te, tr):
        return ref_discounted(r, te, tr, gamma, nv if with_bootstrap else None)

    check_padded(fn, ref, *data)
    # ... and is lambda_returns with lam = 1.
    r, _, nv, term, trunc = data[1]
    nv_or_zero = nv if with_bootstrap else np.zeros_like(nv)
    close(jit_lambda_returns(r, nv_or_zero, term, trunc, gamma, 1.0), np.asarray(fn(*data[1])))


@SETTINGS
@given(data=rollouts(), gamma=gammas, n=st.sampled_from([1, 2, 3, 5, 25]))
def test_n_step_matches_reference(data, gamma, n):
    check_padded(
        lambda r, v, nv, te, tr: jit_n_step(r, nv, te, tr, gamma, n=n),
        lambda r, v, nv, te, tr: ref_n_step(r, nv, te, tr, gamma, n),
        *data,
    )


jit_retrace = jax.jit(retrace)


def q_and_traces(seed, shape):
    """Random ``Q(s_t, a_t)`` and truncated importance weights in [0, 1] (some exactly 1)."""
    rng = np.random.default_rng(seed)
    traces = np.minimum(1.0, rng.exponential(size=shape)).astype(np.float32)
    return rng.normal(size=shape).astype(np.float32), traces


@SETTINGS
@given(data=rollouts(), gamma=gammas, seed=st.integers(0, 2**31))
def test_retrace_matches_reference(data, gamma, seed):
    q, c = q_and_traces(seed, (T_MAX, B_MAX))
    check_padded(
        lambda r, v, nv, te, tr: jit_retrace(r, q, nv, te, tr, c, gamma),
        lambda r, v, nv, te, tr: ref_retrace(r, q[:r.shape[0], :r.shape[1]], nv, te, tr,
                                             c[:r.shape[0], :r.shape[1]], gamma),
        *data,
    )


def test_retrace_limits():
    """No trace (c = 0): one-step targets r + gamma V(s'), i.e. lambda = 0. Full traces with
    Q(s_{t+1}, a_{t+1}) = V(s_{t+1}) (on-policy, exact critic): the Monte-Carlo return
    bootstrapped at truncations and at the end, i.e. lambda = 1."""
    r, _, nv, term, trunc = make_rollout(3, T_MAX, B_MAX, consistent=True)
    q, _ = q_and_traces(4, r.shape)
    zeros, ones = np.zeros_like(r), np.ones_like(r)
    close(jit_retrace(r, q, nv, term, trunc, zeros, 0.9),
          np.asarray(jit_lambda_returns(r, nv, term, trunc, 0.9, 0.0)))
    q_exact = q.copy()
    q_exact[1:] = nv[:-1]  # Q of the action taken at t + 1 equals V(s_{t+1}) = next_values[t]
    close(jit_retrace(r, q_exact, nv, term, trunc, ones, 0.9),
          np.asarray(jit_lambda_returns(r, nv, term, trunc, 0.9, 1.0)))


def test_retrace_at_episode_ends_by_hand():
    """Env 0 terminates at t = 1, env 1 is truncated at t = 1; both go on to t = 2 (a new
    episode) and the rollout ends there."""
    gamma = 0.5
    r = np.array([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]], np.float32)
    q = np.array([[0.0, 0.0], [10.0, 10.0], [20.0, 20.0]], np.float32)
    nv = np.array([[3.0, 3.0], [7.0, 7.0], [8.0, 8.0]], np.float32)  # V(s_{t+1})
    term = np.array([[0, 0], [1, 0], [0, 0]], bool)
    trunc = np.array([[0, 0], [0, 1], [0, 0]], bool)
    c = np.full((3, 2), 0.5, np.float32)
    out = np.asarray(jit_retrace(r, q, nv, term, trunc, c, gamma))
    np.testing.assert_allclose(out[2], [4 + 0.5 * 8] * 2)  # the rollout end bootstraps
    np.testing.assert_allclose(out[1], [2.0, 2 + 0.5 * 7])  # terminal: none; truncated: V(final)
    # t = 0 carries c[1] (Q_ret[1] - Q[1]) + V(s_1) from inside the episode
    np.testing.assert_allclose(out[0], [1 + 0.5 * (0.5 * (2 - 10) + 3),
                                        1 + 0.5 * (0.5 * (5.5 - 10) + 3)])


def test_n_step_limits_agree_with_lambda_returns():
    r, _, nv, term, trunc = make_rollout(0, T_MAX, B_MAX)
    # n = 1 is the one-step TD target, i.e. lambda = 0.
    one_step, _ = jit_n_step(r, nv, term, trunc, 0.9, n=1)
    close(one_step, np.asarray(jit_lambda_returns(r, nv, term, trunc, 0.9, 0.0)))
    # n >= T is the Monte-Carlo return bootstrapped at truncations and at the end (lambda = 1).
    full, _ = jit_n_step(r, nv, term, trunc, 0.9, n=25)
    close(full, np.asarray(jit_lambda_returns(r, nv, term, trunc, 0.9, 1.0)))


@pytest.mark.parametrize("T", [1, 2, 7])
def test_last_step_is_a_truncation(T):
    """Without padding: the rollout end bootstraps exactly like a truncation, per estimator."""
    r, v, nv, term, trunc = make_rollout(T, T, 3, p_term=0.3, p_trunc=0.3)
    trunc_last = trunc.copy()
    trunc_last[-1] = True
    for fn, ref in [
        (
            lambda tr: jit_gae(r, v, nv, term, tr, 0.9, 0.8),
            lambda: ref_gae(r, v, nv, term, trunc, 0.9, 0.8),
        ),
        (
            lambda tr: jit_lambda_returns(r, nv, term, tr, 0.9, 0.8),
            lambda: ref_lambda_returns(r, nv, term, trunc, 0.9, 0.8),
        ),
        (
            lambda tr: jit_discounted(r, term, tr, 0.9, nv),
            lambda: ref_discounted(r, term, trunc, 0.9, nv),
        ),
        (
            lambda tr: jit_n_step(r, nv, term, tr, 0.9, n=3)[0],
            lambda: ref_n_step(r, nv, term, trunc, 0.9, 3)[0],
        ),
    ]:
        close(fn(trunc), ref())
        close(fn(trunc_last), ref())


# --------------------------------------------------------------------------------------------
# Hand-computed tiny cases (T = 3, B absent): r = [1, 2, 3], gamma = 0.5.
# --------------------------------------------------------------------------------------------

R = np.array([1.0, 2.0, 3.0], np.float32)
V = np.array([4.0, 8.0, 6.0], np.float32)
NV = np.array([8.0, 20.0, 30.0], np.float32)  # nv[0] == v[1]; nv[1] is the final obs' value
NONE = np.array([False, False, False])
MID = np.array([False, True, False])


@pytest.mark.parametrize(
    "term, trunc, expected",
    [
        # No boundary: G2 = 3 + .5*30 = 18, G1 = 2 + .5*18 = 11, G0 = 1 + .5*11 = 6.5.
        (NONE, NONE, [6.5, 11.0, 18.0]),
        # Truncated at t=1: G1 = 2 + .5*20 = 12 (bootstraps the final obs), G0 = 1 + .5*12 = 7.
        (NONE, MID, [7.0, 12.0, 18.0]),
        # Terminated at t=1: G1 = 2, G0 = 1 + .5*2 = 2.
        (MID, NONE, [2.0, 2.0, 18.0]),
        # Both set: termination wins.
        (MID, MID, [2.0, 2.0, 18.0]),
    ],
)
def test_hand_computed_discounted_returns(term, trunc, expected):
    close(discounted_returns(R, term, trunc, 0.5, NV), np.array(expected))


def test_hand_computed_gae_and_lambda_returns():
    # gamma = lam = 0.5. deltas: d0 = 1 + 4 - 4 = 1, d1 = 2 + 10 - 8 = 4, d2 = 3 + 15 - 6 = 12.
    # Truncated at t=1: A = [1 + .25*4, 4, 12] = [2, 4, 12]; G = A + V = [6, 12, 18].
    close(gae(R, V, NV, NONE, MID, 0.5, 0.5), np.array([2.0, 4.0, 12.0]))
    close(lambda_returns(R, NV, NONE, MID, 0.5, 0.5), np.array([6.0, 12.0, 18.0]))
    # Terminated at t=1: d1 = 2 - 8 = -6, A = [1 - .25*6, -6, 12] = [-0.5, -6, 12].
    close(gae(R, V, NV, MID, NONE, 0.5, 0.5), np.array([-0.5, -6.0, 12.0]))
    close(lambda_returns(R, NV, MID, NONE, 0.5, 0.5), np.array([3.5, 2.0, 18.0]))
    # No boundary: A2 = 12, A1 = 4 + .25*12 = 7, A0 = 1 + .25*7 = 2.75.
    close(gae(R, V, NV, NONE, NONE, 0.5, 0.5), np.array([2.75, 7.0, 12.0]))


def test_hand_computed_n_step():
    # n = 3, no boundary: t0 = 1 + .5*2 + .25*3 + .125*30 = 6.5; t1 = 2 + 1.5 + .25*30 = 11.
    targets, discounts = n_step_targets(R, NV, NONE, NONE, 0.5, 3)
    close(targets, np.array([6.5, 11.0, 18.0]))
    close(discounts, np.array([0.125, 0.25, 0.5]))
    # Truncated at t=1: t0 = 1 + .5*2 + .25*20 = 7 (bootstrap the final obs value of step 1).
    targets, discounts = n_step_targets(R, NV, NONE, MID, 0.5, 3)
    close(targets, np.array([7.0, 12.0, 18.0]))
    close(discounts, np.array([0.25, 0.5, 0.5]))
    # Terminated at t=1: no bootstrap, discount 0.
    targets, discounts = n_step_targets(R, NV, MID, MID, 0.5, 3)
    close(targets, np.array([2.0, 2.0, 18.0]))
    close(discounts, np.array([0.0, 0.0, 0.5]))


# --------------------------------------------------------------------------------------------
# Truncation bootstraps, termination does not: d(output)/d(next_values) at boundary steps.
# --------------------------------------------------------------------------------------------

ESTIMATORS = {
    "gae": lambda r, v, nv, te, tr: gae(r, v, nv, te, tr, 0.9, 0.8),
    "lambda_returns": lambda r, v, nv, te, tr: lambda_returns(r, nv, te, tr, 0.9, 0.8),
    "discounted_returns": lambda r, v, nv, te, tr: discounted_returns(r, te, tr, 0.9, nv),
    "n_step": lambda r, v, nv, te, tr: n_step_targets(r, nv, te, tr, 0.9, 3)[0],
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_truncation_bootstraps_and_termination_does_not(name):
    fn = ESTIMATORS[name]
    T = 5
    r, v, nv = (np.ones(T, np.float32) for _ in range(3))
    term = np.array([False, True, False, False, False])
    trunc = np.array([False, False, False, True, False])
    # Step 1 terminates, step 3 is truncated, step 4 is the rollout end.
    grads = jax.jit(jax.grad(lambda nv_: fn(r, v, nv_, term, trunc).sum()))(nv)
    assert grads[1] == 0.0, "terminated step must not bootstrap"
    assert grads[3] > 0.0, "truncated step must bootstrap from the final observation's value"
    assert grads[4] > 0.0, "the rollout's last step must bootstrap"
    # The target at the step just before a termination doesn't look past it.
    out = fn(r, v, nv, term, trunc)
    out_changed = fn(r + np.eye(T, dtype=np.float32)[2] * 100.0, v, nv, term, trunc)
    close(out[:2], np.asarray(out_changed[:2]))


# --------------------------------------------------------------------------------------------
# jit / vmap / dtype / shape conventions.
# --------------------------------------------------------------------------------------------


def test_vmap_over_gamma_and_lambda_matches_separate_calls():
    r, v, nv, term, trunc = make_rollout(1, 10, 3)
    gs = jnp.array([0.0, 0.5, 0.9, 0.99, 1.0])
    ls = jnp.array([0.0, 0.95, 0.5, 1.0, 0.3])
    batched = jax.jit(jax.vmap(gae, in_axes=(None, None, None, None, None, 0, 0)))(
        r, v, nv, term, trunc, gs, ls
    )
    batched_lr = jax.vmap(lambda g, lam_: lambda_returns(r, nv, term, trunc, g, lam_))(gs, ls)
    batched_ns = jax.vmap(lambda g: n_step_targets(r, nv, term, trunc, g, 4))(gs)
    for i, (g, lam) in enumerate(zip(gs.tolist(), ls.tolist())):
        close(batched[i], ref_gae(r, v, nv, term, trunc, g, lam))
        close(batched_lr[i], ref_lambda_returns(r, nv, term, trunc, g, lam))
        ns_targets, ns_discounts = ref_n_step(r, nv, term, trunc, g, 4)
        close(batched_ns[0][i], ns_targets)
        close(batched_ns[1][i], ns_discounts)
    # The same compiled program serves every gamma (traced, not static).
    close(jit_gae(r, v, nv, term, trunc, gs[2], ls[2]), np.asarray(batched[2]))


def test_vmap_over_envs_and_trailing_batch_shapes():
    r, v, nv, term, trunc = make_rollout(2, 7, 6)
    expected = ref_gae(r, v, nv, term, trunc, 0.9, 0.9)
    # vmap over the env axis of single-env [T] rollouts.
    per_env = jax.jit(jax.vmap(functools.partial(gae, gamma=0.9, lam=0.9), in_axes=1, out_axes=1))(
        r, v, nv, term, trunc
    )
    close(per_env, expected)
    # Any trailing batch shape: [T, 2, 3].
    reshaped = jit_gae(*(x.reshape(7, 2, 3) for x in (r, v, nv, term, trunc)), 0.9, 0.9)
    close(reshaped.reshape(7, 6), expected)


def test_float_flags_equal_bool_flags():
    r, v, nv, term, trunc = make_rollout(4, T_MAX, B_MAX, p_term=0.3, p_trunc=0.3)
    as_float = (term.astype(np.float32), trunc.astype(np.float32))
    close(jit_gae(r, v, nv, *as_float, 0.9, 0.9), ref_gae(r, v, nv, term, trunc, 0.9, 0.9))
    close(jit_n_step(r, nv, *as_float, 0.9, n=3)[0], ref_n_step(r, nv, term, trunc, 0.9, 3)[0])


def test_reverse_discounted_cumsum():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    close(reverse_discounted_cumsum(x, np.array([0.5, 0.0, 0.5], np.float32)), [2.0, 2.0, 3.0])


def test_n_step_rejects_bad_n():
    r, _, nv, term, trunc = make_rollout(0, 3, 1)
    with pytest.raises(ValueError):
        n_step_targets(r, nv, term, trunc, 0.9, 0)
