"""experiments/hlo_loop_kernels.py counts a loop's kernels in an optimized HLO module's text:
free instructions not at all, nested loops by their trip counts, a fusion once."""

from tests.experiments.scripts import load

MODULE = """HloModule jit_toy

%fused_dot (p0: f32[4,8], p1: f32[8,2]) -> f32[4,2] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %p1 = f32[8,2]{1,0} parameter(1)
  ROOT %dot.1 = f32[4,2]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%inner_body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %x = f32[4]{0} get-tuple-element(%t), index=1
  %c = s32[] constant(1)
  %next = s32[] add(%i, %c)
  %y = f32[4]{0} copy(%x)
  ROOT %r = (s32[], f32[4]{0}) tuple(%next, %y)
}

%inner_cond (t: (s32[], f32[4])) -> pred[] {
  %t = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%outer_body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]{0}) parameter(0)
  %a = f32[4,8]{1,0} constant({...})
  %b = f32[8,2]{1,0} constant({...})
  %f = f32[4,2]{1,0} fusion(%a, %b), kind=kCustom, calls=%fused_dot
  %w = (s32[], f32[4]{0}) while(%t), condition=%inner_cond, body=%inner_body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT %r = (s32[], f32[4]{0}) tuple(%w)
}

%outer_cond (t: (s32[], f32[4])) -> pred[] {
  %t = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]{0}) parameter(0)
  ROOT %w = (s32[], f32[4]{0}) while(%p), condition=%outer_cond, body=%outer_body, backend_config={"known_trip_count":{"n":"5"}}
}
"""


def test_a_loop_iteration_counts_its_kernels(tmp_path):
    script = load("hlo_loop_kernels")
    path = tmp_path / "module.txt"
    path.write_text(MODULE)
    row = script.count(path, trip=5)
    # one fusion; the inner loop: 3 x (add, copy) and 4 x compare
    assert row["by_op"] == {"fusion": 1, "add": 3, "copy": 3, "compare": 4}
    assert row["kernels"] == 11
    assert row["dots"] == 1 and row["dots_alone"] == 0 and row["dot_shapes"] == ["f32[4,2]"]
    assert row["output_elements"]["fusion"] == 8


def test_a_missing_loop_is_one_line(tmp_path):
    script = load("hlo_loop_kernels")
    path = tmp_path / "module.txt"
    path.write_text(MODULE)
    try:
        script.count(path, trip=7)
    except SystemExit as stop:
        assert "no while loop with a known trip count of 7" in str(stop)
    else:
        raise AssertionError("a trip count with no loop must stop")
