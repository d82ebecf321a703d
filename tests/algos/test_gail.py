"""GAIL: the discriminator's loss and reward, a short run's diagnostics, and the env's true
return logged beside the learned reward."""

import jax
import jax.numpy as jnp
import numpy as np

import jaxrl
from jaxrl.algos import gail
from jaxrl.parts.heads import MLP


def test_learned_rewards_are_the_discriminators():
    logit = jnp.array([-3.0, 0.0, 2.0])
    d = jax.nn.sigmoid(logit)
    np.testing.assert_allclose(gail.learned_reward(logit, "gail"), -jnp.log(1 - d), rtol=1e-5)
    np.testing.assert_allclose(gail.learned_reward(logit, "airl"),
                               jnp.log(d) - jnp.log(1 - d), rtol=1e-5)


def test_disc_loss_is_cross_entropy_and_a_unit_gradient_penalty():
    net = MLP(hidden=(8,), out=1, activation="tanh")
    expert_x, policy_x = jnp.ones((4, 3)), -jnp.ones((4, 3))
    params = net.init(jax.random.key(0), expert_x)
    hp = gail.GAILConfig().hparams()
    loss, aux = gail.disc_loss(params, net, expert_x, policy_x, jax.random.key(1), hp)
    le, lp = gail.logits(net, params, expert_x), gail.logits(net, params, policy_x)
    bce = -jnp.mean(jnp.log(jax.nn.sigmoid(le))) - jnp.mean(jnp.log(1 - jax.nn.sigmoid(lp)))
    np.testing.assert_allclose(aux["disc_loss"], bce, rtol=1e-5)
    np.testing.assert_allclose(loss, bce, rtol=1e-6)  # grad_penalty defaults to 0
    hp = gail.GAILConfig(grad_penalty=10.0).hparams()
    loss, aux = gail.disc_loss(params, net, expert_x, policy_x, jax.random.key(1), hp)
    np.testing.assert_allclose(loss, bce + 10.0 * aux["disc_grad_penalty"], rtol=1e-5)
    assert aux["disc_grad_penalty"] > 0


def test_a_short_gail_run_logs_its_diagnostics(cartpole_expert):
    _, _, demos = cartpole_expert
    r = jaxrl.train("gail", env="CartPole-v1", seeds=2, total_steps=8192, store=False,
                    progress=False, demos=demos, num_envs=4, num_steps=64, eval_episodes=4,
                    grad_penalty=1.0)
    m = r.metrics
    for col in ("disc_accuracy_expert", "disc_accuracy_policy", "disc_loss",
                "disc_grad_penalty", "learned_reward_mean", "episode_return_mean"):
        assert col in m and np.isfinite(m[col]).all(), col
    # the discriminator learns to tell the two apart
    late = m.groupby("seed").tail(8)
    assert (late.disc_accuracy_expert + late.disc_accuracy_policy).mean() > 1.0
    assert (m.learned_reward_mean > 0).all()  # -log(1 - D) > 0
    # CartPole pays 1 per step: the logged return is the env's, not the learned one
    ended = m[m.episode_count > 0]
    assert (ended.episode_return_mean >= 8).all()
