#!/usr/bin/env bash
# Nsight Compute metrics of the 3840x2160 kernels (run on a GPU machine, after building):
#   tests/bench/profile.sh BUILD_DIR [OUT_DIR]
# Prints DRAM throughput, achieved occupancy, waves and the busiest pipes per kernel.
set -eu
build=${1:-build}
out=${2:-.}
ncu --kernel-name regex:sobel_kernel --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats \
  --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio \
  "$build/tests/bench/bench_kernels" --profile > "$out/ncu-sobel-sections.txt" 2>&1
ncu --kernel-name regex:'sobel_kernel|enhance_rgb_kernel|histogram_kernel|heatmap_rgb_kernel|noisemap_rgb_kernel|motion_search_kernel' --launch-skip 0 --launch-count 14 \
  --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__waves_per_multiprocessor,launch__registers_per_thread,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
  "$build/tests/bench/bench_kernels" --profile 2>&1 | tee "$out/ncu.txt"
