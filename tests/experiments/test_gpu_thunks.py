"""experiments/gpu_thunks.py counts the host's launches per loop iteration from XLA's thunk
dumps: a command buffer once whatever it holds, every other thunk at a body's level once, a
nested loop by its trip count, a loop's condition and a buffer's commands not at all."""

from tests.experiments.scripts import load

# the dump's own layout: a command buffer's commands and a loop's condition and body indented
# under it, "condition:" at the line's start, "body:" indented
SEQUENCE = """\
000: kCommandBuffer [source       | next=001 (1)]
    001: kCopy         [source | sink] kCopy
    002: kCustomKernel [source | sink] loop_broadcast_fusion grid: [1, 1, 1]
003: kWhile         [prev=000 (1) | next=000 (1)]
condition:
    004: kCustomKernel [source | sink] loop_compare_fusion grid: [1, 1, 1]
  body:
    000: kCommandBuffer      [source       | next=006 (1)]
        005: kCustomKernel [source | sink] loop_add_fusion grid: [2, 1, 1]
    006: kDynamicSliceFusion [prev=000 (1) | next=008 (1)] params=1, results=1
        007: kCopy [source | sink] kCopy
    008: kWhile              [prev=006 (1) | next=000 (1)]
condition:
        009: kCustomKernel [source | sink] loop_compare_fusion_1 grid: [1, 1, 1]
      body:
        010: kCustomKernel       [source       | next=011 (1)] loop_dynamic_update_slice_fusion
        011: kDynamicSliceFusion [prev=010 (1) | next=000 (1)] params=1, results=1
            012: kCopy [source | sink] kCopy
        000: kCommandBuffer      [prev=011 (1) | sink        ]
            013: kCustomKernel [source | sink] gemm_fusion grid: [4, 1, 1]
            014: kCustomKernel [source | sink] loop_add_fusion_2 grid: [4, 1, 1]
    000: kCommandBuffer      [prev=008 (1) | sink        ]
        015: kCustomKernel [source | sink] loop_add_fusion_3 grid: [1, 1, 1]
000: kCommandBuffer [prev=003 (1) | sink        ]
    016: kCopy [source | sink] kCopy
"""

METADATA = """\
thunk_metadata {
  thunk_info {
    profile_annotation: "while.7"
    thunk_id: 3
  }
  thunk_kind: "kWhile"
}
thunk_metadata {
  thunk_info {
    profile_annotation: "while.9"
    thunk_id: 8
  }
  thunk_kind: "kWhile"
}
"""

HLO = """\
  %while.9 = (s32[], f32[4]{0}) while(%t), condition=%c2, body=%b2, backend_config={"known_trip_count":{"n":"5"}}
  ROOT %while.7 = (s32[], f32[4]{0}) while(%t0), condition=%c1, body=%b1, backend_config={"known_trip_count":{"n":"3"}}
"""


def test_launches_per_iteration_of_each_loop(tmp_path):
    thunks = load("gpu_thunks")
    stem = "module_0001.jit_toy"
    (tmp_path / f"{stem}.thunk_sequence_after_thunk_passes.txt").write_text(SEQUENCE)
    (tmp_path / f"{stem}.thunk_metadata.txt").write_text(METADATA)
    (tmp_path / f"{stem}.sm_9.0a_gpu_after_optimizations.txt").write_text(HLO)
    found = thunks.read(tmp_path / stem)
    outer, inner = found["loops"]
    assert (outer["while"], outer["trip"], outer["depth"]) == ("while.7", 3, 0)
    assert (inner["while"], inner["trip"], inner["depth"]) == ("while.9", 5, 1)
    # the inner body: a lone kernel, a dynamic-slice thunk, one command buffer
    assert inner["per_iteration"] == {"kCustomKernel": 1, "kDynamicSliceFusion": 1,
                                      "kCommandBuffer": 1}
    # the outer body: two buffers and a dynamic-slice thunk of its own, the inner loop 5 times
    assert outer["own"] == {"kCommandBuffer": 2, "kDynamicSliceFusion": 1}
    assert outer["per_iteration"] == {"kCommandBuffer": 7, "kDynamicSliceFusion": 6,
                                      "kCustomKernel": 5}
    # the program: a buffer before the loop and one after, the loop 3 times
    assert found["program"] == {"kCommandBuffer": 2 + 21, "kDynamicSliceFusion": 18,
                                "kCustomKernel": 15}
