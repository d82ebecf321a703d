"""The experiments' notes (benchmarks/experiments-cpu/NOTES.md) quote their results files: each
figure a section states is recomputed here from the file it cites."""

import json
from pathlib import Path

import numpy as np

from jaxrl import stats
from jaxrl.studies.verdicts import signed_rank_test
from tests.experiments.reports import flat_notes
from tests.experiments.scripts import load as load_script

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/experiments-cpu"
FLAT = flat_notes(HERE)


def load(name: str) -> dict:
    return json.loads((HERE / name).read_text())


def quoted(*parts: str) -> None:
    """Each part is in the notes (whitespace folded)."""
    for part in parts:
        assert " ".join(part.split()) in FLAT, part


def seeds(values, fmt: str = ".1f") -> str:
    return ", ".join(f"{v:{fmt}}" for v in values)


def test_ddpg_truncation_rows_and_the_paired_comparison():
    d = load("ddpg_truncation.json")
    assert d["about"]["git_dirty"] is False and d["about"]["device"]["platform"] == "cpu"
    right, wrong = d["per_seed"].values()
    assert len(right) == len(wrong) == 16
    c = d["comparison"]
    for (label, x), side in zip(d["per_seed"].items(), "ab"):
        run = d["runs"][label]
        quoted(f"| {label} | {seeds(x)} | {c['iqm_' + side]:.1f} [{c['iqm_' + side + '_ci_low']:.1f}, "
               f"{c['iqm_' + side + '_ci_high']:.1f}] | {np.mean(x):.1f} | "
               f"{run['run_seconds']:.0f} | {run['env_steps_per_second']:,.0f} | "
               f"{run['compile_seconds']:.1f} |")
    quoted(f"Welch's t-test p {c['welch_p']:.2f}")
    d_seed = np.asarray(right) - np.asarray(wrong)
    p = d["paired"]
    assert p["right_higher"] == int(np.sum(d_seed > 0)) and np.isclose(p["mean_difference"],
                                                                     d_seed.mean())
    quoted(f"higher on {p['right_higher']} of 16 seeds, by {p['mean_difference']:.1f} on average "
           f"({p['min_difference']:.1f} to {p['max_difference']:.1f}; signed-rank p "
           f"{p['signed_rank_p']:.2f})")
    both = np.concatenate([right, wrong])
    quoted(f"every final return between {both.min():.1f} and {both.max():.1f}")
    assert p["signed_rank_p"] > 0.05 and c["welch_p"] > 0.05  # "costs nothing measurable"


def test_the_truncation_probe_catches_the_bug_ddpg_does_not_show_on_pendulum():
    bug = json.loads((ROOT / "benchmarks/probes-cpu/ddpg-truncation-as-termination.json")
                     .read_text())
    assert bug["overrides"] == {"bootstrap_truncation": "false"}  # as --set wrote it
    (rung,) = [r for r in bug["rungs"] if r["name"] == "probe:continuous-truncation"]
    assert not rung["passed"] and rung["expected"]["values"] == [10.0]
    (values,) = rung["measured"]["values"]
    quoted(f"learns {seeds(values, '.3f')} on `probe:continuous-truncation`'s 4 seeds")


def test_recurrent_rows_and_what_the_notes_say_of_them():
    d = load("recurrent_pomdp.json")["results"]
    for label, row in d.items():
        s = row["summary"]
        quoted(f"| {label} | {seeds(row['per_seed'])} | {s['iqm']:.1f} [{s['iqm_ci_low']:.1f}, "
               f"{s['iqm_ci_high']:.1f}] | {s['mean']:.1f} | {row['run_seconds']:,.0f} | "
               f"{row['env_steps_per_second']:,.0f} | {row['compile_seconds']:.1f} |")
        assert row["seeds"] == 8 and 499_000 < row["total_steps_per_seed"] <= 500_000
        assert all(f.startswith(("experiments/ddpg", "README", "tests/"))
                   for f in row["code_diff_files"])
    ff = np.asarray(d["hidden velocities, none"]["per_seed"])
    gru = np.asarray(d["hidden velocities, gru"]["per_seed"])
    lstm = np.asarray(d["hidden velocities, lstm"]["per_seed"])
    assert min(gru.min(), lstm.min()) > ff.max()
    assert (np.asarray(d["fully observed, none"]["per_seed"]) == 500).all()
    quoted(f"stays near {ff.mean():.0f} (per seed {ff.min():.1f} to {ff.max():.1f})",
           f"{(gru == 500).sum()} of 8 GRU seeds and {(lstm == 500).sum()} of 8 LSTM seeds end "
           "at 500")
    c = stats.compare(gru, lstm)
    assert c["welch_p"] > 0.05
    quoted(f"(Welch p {c['welch_p']:.2f}, probability that GRU beats LSTM "
           f"{c['prob_improvement']:.2f})")


def test_popart_rows_the_bug_trace_and_the_learning_rate_table():
    d = load("popart_scale.json")["results"]
    for algo in ("ppo", "a2c"):
        for label, row in d[algo].items():
            if "run_id" not in row:
                continue
            s, sigma = row["summary"], row.get("popart_sigma_final")
            sig = "–" if not sigma else f"{min(sigma):,.2f} to {max(sigma):,.2f}"
            quoted(f"| {algo.upper()} | {label} | {seeds(row['per_seed'])} | {s['iqm']:.1f} "
                   f"[{s['iqm_ci_low']:.1f}, {s['iqm_ci_high']:.1f}] | "
                   f"{row['vs_unscaled']['prob_improvement']:.2f} | {sig} |")
    ppo = d["ppo"]
    assert all(v == 500 for label in ("x1000 + PopArt", "unscaled + PopArt")
               for v in ppo[label]["per_seed"])
    ratio = (np.mean(ppo["x1000 + PopArt"]["popart_sigma_final"])
             / np.mean(ppo["unscaled + PopArt"]["popart_sigma_final"]))
    assert 700 < ratio < 1400  # "about 1,000 times"
    quoted(f"p {ppo['x1000']['vs_unscaled']['welch_p']:.3f} against the unscaled env")
    trace = load("popart_scale-before-fix.json")["trace_ppo_unscaled_popart_seed0"]
    at = {u: i for i, u in enumerate(trace["update"])}
    assert np.isclose(trace["popart_sigma"][at[540.0]], 1e-4)
    quoted(f"sigma falls from {trace['popart_sigma'][at[495.0]]:.3f} at update 495 to its floor "
           f"of 1e-4 at update 540, where the normalized value loss is "
           f"{trace['value_loss'][at[540.0]]:,.0f}")
    both = d["a2c"]["popart_x1000_vs_unscaled"]
    quoted(f"probability of improvement {both['prob_improvement']:.2f}, Welch p "
           f"{both['welch_p']:.2f}")

    arms = {"unscaled": ("a2c_lr_unscaled.json", "unscaled"),
            "x1000": ("a2c_lr_x1000.json", "x1000"),
            "unscaled + PopArt": ("popart_a2c_lr_unscaled.json", "unscaled + PopArt"),
            "x1000 + PopArt": ("popart_a2c_lr_x1000.json", "x1000 + PopArt")}
    for label, (name, single) in arms.items():
        sweep = load(name)
        by_lr = {c["overrides"]["learning_rate"]: c for c in sweep["configs"]}
        table = {r["learning_rate"]: r for r in sweep["table"]}
        cells = []
        for lr in ("0.0007", "0.0021", "0.007"):
            returns = by_lr[lr]["final_eval_return"]
            assert len(returns) == 8 and np.isclose(np.mean(returns), table[lr]["mean"])
            r = table[lr]
            cells.append(f"{r['iqm']:.1f} [{r['ci_low']:.1f}, {r['ci_high']:.1f}], "
                         f"{sum(v == 500 for v in returns)} of 8 at 500")
        quoted(f"| {label} | " + " | ".join(cells) + " |")
        # the sweep's default-rate member is the single run, seed by seed
        assert by_lr["0.0007"]["final_eval_return"] == d["a2c"][single]["per_seed"]
        solved = label != "x1000"
        for lr in ("0.0021", "0.007"):
            assert all(v == 500 for v in by_lr[lr]["final_eval_return"]) == solved


def test_mountaincar_noise_rows_and_the_presets_claim():
    d = load("sac_mountaincar_noise.json")
    limit = d["solved_above"]
    for label, row in d["results"].items():
        s = row["summary"]
        assert row["solved"] == sum(v > limit for v in row["per_seed"])
        quoted(f"| {label} | {seeds(row['per_seed'])} | {row['solved']} of 8 | {s['iqm']:.1f} "
               f"[{s['iqm_ci_low']:.1f}, {s['iqm_ci_high']:.1f}] | {row['run_seconds']:,.0f} | "
               f"{row['env_steps_per_second']:,.0f} | {row['compile_seconds']:.1f} |")
    solved = {label: row["solved"] for label, row in d["results"].items()}
    assert solved == {"white": 0, "ou theta 0.15": 2, "ou theta 2": 8}
    two = d["results"]["ou theta 2"]
    assert two["compile_source"] == "cache"
    comment = (ROOT / "presets/sac/mountaincar-ou.yaml").read_text()
    assert (f"final deterministic evaluation {min(two['per_seed']):.1f}-"
            f"{max(two['per_seed']):.1f}") in comment
    assert "theta 0.15 (~670 steps: one push a whole episode) on 2 of 8, white noise on 0 of 8" \
        in comment


def test_her_rows_and_the_bit_flipping_contrast():
    d = load("her_goals.json")
    assert d["about"]["git_dirty"] is False
    names = {"bitflip": "`goal:BitFlip`, 25 bits, DQN", "reach": "`goal:PointReach`, SAC"}
    for label, row in d["results"].items():
        task, _, her = label.split(" ")
        assert np.isclose(row["success_mean"], np.mean(row["success_per_seed"]))
        quoted(f"| {names[task]} | {her.split('=')[1]} | {seeds(row['success_per_seed'], '.2f')} | "
               f"{row['success_mean']:.2f} | {seeds(row['final_eval_return'])} | "
               f"{row['run_seconds']:,.0f} | {row['env_steps_per_second']:,.0f} | "
               f"{row['compile_seconds']:.1f} |")
    r = d["results"]
    assert r["bitflip dqn her=future"]["success_mean"] == 1.0
    assert r["bitflip dqn her=none"]["success_mean"] == 0.0
    assert all(v == -25 for v in r["bitflip dqn her=none"]["final_eval_return"])
    assert abs(np.mean(r["bitflip dqn her=future"]["final_eval_return"]) + 11.5) < 1
    with_her = np.asarray(r["reach sac her=future"]["final_eval_return"])
    without = np.asarray(r["reach sac her=none"]["final_eval_return"])
    diff = with_her - without
    assert (diff > 0).sum() == 7 and (diff == 0).sum() == 1
    quoted(f"by {diff.mean():.2f} steps on average, signed-rank p "
           f"{signed_rank_test(diff, 0.0):.3f}")


def test_imitation_rows_and_what_the_notes_say_of_gail_on_pendulum():
    d = load("imitation.json")["results"]
    for env, e in d.items():
        demo, rand = np.mean(e["demo_returns"]), e["random_return"]
        quoted(f"| {env} | random policy | – | – | {rand:.1f} | 0 by definition |")
        quoted(f"| {env} | expert (PPO, seed {e['expert_seed']} of 2) | "
               f"{seeds(e['expert_final_eval'])} | – | demonstrations {demo:.1f} |")
        for arm in ("bc", "gail"):
            v = e[arm]
            assert np.isclose(v["normalized_score"], (np.mean(v["per_seed"]) - rand) / (demo - rand))
            quoted(f"| {env} | {arm.upper()} | {seeds(v['per_seed'])} | {v['iqm']:.1f} "
                   f"[{v['iqm_ci_low']:.1f}, {v['iqm_ci_high']:.1f}] | {v['mean']:.1f} | "
                   f"{v['normalized_score']:.3f} | {v['run_seconds']:,.0f} | "
                   f"{v['env_steps_per_second']:,.0f} | {v['compile_seconds']:.1f} |")
    cart = d["CartPole-v1"]
    assert sorted(cart["bc"]["per_seed"])[0] < 500 == sorted(cart["bc"]["per_seed"])[1]
    assert all(v == 500 for v in cart["gail"]["per_seed"])
    gail = d["Pendulum-v1"]["gail"]
    g = np.asarray(gail["per_seed"])
    quoted(f"(per seed {g.max():.1f} to {g.min():.1f}; normalized {gail['normalized_score']:.3f})",
           f"factor of {g.min() / g.max():.1f}")
    tenth = gail["by_tenth"]
    quoted(f"falls on the expert's pairs from {tenth['disc_accuracy_expert'][0]:.3f} to "
           f"{tenth['disc_accuracy_expert'][-1]:.3f} and ends at "
           f"{tenth['disc_accuracy_policy'][-1]:.3f} on the policy's")


def test_the_probe_table_is_the_ladders_files_and_every_reward_learner_passes():
    ladders = load_script("probe_ladders")
    probes = ROOT / "benchmarks/probes-cpu"
    notes = (probes / "NOTES.md").read_text()
    assert ladders.table(probes) in notes
    learners = [a for a in ladders.BUILT_IN if a not in ("bc", "gail")]
    for algo in learners:
        ladder = json.loads((probes / f"{algo}.json").read_text())
        assert ladder["rungs"] and all(r["passed"] for r in ladder["rungs"]), algo
        assert ladder["about"]["git_dirty"] is False
    assert not (probes / "bc.json").exists() and not (probes / "gail.json").exists()
    ddpg = json.loads((probes / "ddpg.json").read_text())
    assert any(r["name"] == "probe:continuous-truncation" and r["passed"] for r in ddpg["rungs"])


def test_the_main_job_every_seed_at_500():
    d = load("main_job.json")
    assert d["seeds"] == 16 and d["about"]["git_dirty"] is False
    assert d["final_eval_return"] == [500.0] * 16 and d["compile_source"] == "compiled"
    quoted(f"{d['total_steps_per_seed']:,} env steps a seed",
           f"{d['run_seconds']:.1f} s of training at {d['env_steps_per_second']:,.0f} "
           f"env-steps/s over the 16 seeds", f"{d['compile_seconds']:.1f} s of compile")
