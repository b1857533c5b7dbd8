// The verdicts that name no bottleneck: a failure (out of memory, a stage that failed), nothing measured, a script
// that never reported (and why, in the user's terms), an interruption, and too little steady data.
#include "probe/verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/test_results.h"

namespace sat::probe {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace results;

TEST(Decide, GpuOutOfMemoryIsAFailureNotABottleneck) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.outcome.exit_class = run::ExitClass::kGpuOom;
  r.full.outcome.detail = "GPU out of memory: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                          "2.00 GiB";
  r.full.outcome.exit_code = 1;
  SetGpu(r.full, 80, 15.8);
  Verdict v = Decide(r);
  EXPECT_TRUE(v.failed);
  EXPECT_EQ(v.bottleneck, "");
  EXPECT_EQ(v.failure, "the run ran out of GPU memory");
  EXPECT_EQ(v.evidence, "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB; GPU memory "
                        "peak 15.8 GiB");
  EXPECT_EQ(v.next, "lower the batch size / enable mixed precision (bf16/fp16 autocast)");
}

TEST(Decide, AFailureAfterMeasuringIsStillAFailure) {
  ProbeResult r = ComputeBoundWithHelper();
  r.full.outcome.exit_class = run::ExitClass::kHostOom;
  r.full.outcome.detail = "host out of memory (probably the kernel's OOM killer): killed by SIGKILL";
  Verdict v = Decide(r);
  EXPECT_TRUE(v.failed);
  EXPECT_EQ(v.bottleneck, "");
  EXPECT_EQ(v.failure, "the run ran out of host memory");
  EXPECT_THAT(v.evidence, HasSubstr("it ran at 1,150 samples/s before failing"));
  EXPECT_THAT(v.next, HasSubstr("fewer DataLoader workers"));
}

TEST(Decide, AHelperStageFailureFailsTheProbeOnlyWhenFullMeasuredNothing) {
  ProbeResult r = ComputeBoundWithHelper();
  r.compute.outcome.exit_class = run::ExitClass::kGpuOom;
  r.compute.outcome.detail = "GPU out of memory: CUDA out of memory";
  Verdict v = Decide(r);
  EXPECT_FALSE(v.failed);
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_THAT(Notes(v), HasSubstr("the compute stage failed (gpu_oom): GPU out of memory"));

  r.full = Skipped(core::StageKind::kFull, "interrupted");
  v = Decide(r);
  EXPECT_TRUE(v.failed);
  EXPECT_EQ(v.failure, "the run ran out of GPU memory (in the compute stage)");
}

TEST(Decide, OtherFailuresNameTheirCause) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.outcome.exit_class = run::ExitClass::kWorkerKilled;
  r.full.outcome.detail = "a DataLoader worker died: DataLoader worker (pid 4242) is killed by signal: Killed.";
  Verdict worker = Decide(r);
  EXPECT_EQ(worker.failure, "a DataLoader worker died");
  EXPECT_EQ(worker.evidence, "DataLoader worker (pid 4242) is killed by signal: Killed.");

  r.full.outcome.exit_class = run::ExitClass::kStartFailed;
  r.full.outcome.detail = "cannot run 'pyhton': No such file or directory";
  EXPECT_EQ(Decide(r).failure, "the command could not be started");

  r.full.outcome.exit_class = run::ExitClass::kFailed;
  r.full.outcome.detail = "exited with code 3: ValueError: bad shape";
  Verdict v = Decide(r);
  EXPECT_EQ(v.failure, "the run failed");
  EXPECT_EQ(v.evidence, "exited with code 3: ValueError: bad shape");
  EXPECT_THAT(v.next, HasSubstr("stderr.log"));
}

TEST(Decide, NothingMeasuredIsUnknownAndSaysWhy) {
  ProbeResult r = Parsed(true, 0);
  r.full.estimate = {};
  r.full.observations = 0;
  r.full.parsed_lines = false;
  Verdict v = Decide(r);
  EXPECT_FALSE(v.failed);
  EXPECT_EQ(v.bottleneck, "");
  EXPECT_THAT(v.evidence, HasSubstr("reported no progress: with --parse the output lines are the only source"));
  EXPECT_THAT(v.next, StartsWith("check the --parse pattern against the script's output"));
  EXPECT_THAT(v.next, HasSubstr("probe without --parse to instrument the script automatically"));

  r.full.observations = 12;
  r.full.outcome.exit_class = run::ExitClass::kFinished;
  r.full.outcome.duration_s = 4.2;
  v = Decide(r);
  EXPECT_THAT(v.evidence, HasSubstr("finished after 4.2 s"));
  EXPECT_THAT(v.next, HasSubstr("run longer"));
}

TEST(Decide, AnUnreportedPyTorchScriptIsNotToldToEditItsCodeFirst) {
  ProbeResult r = Silent(true);
  r.full.torch_loaded = true;
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "");
  EXPECT_EQ(v.evidence, "the full stage ran 48.0 s (stopped) and reported no progress: the script imported torch "
                        "but reached no training step (optimizer.step() or backward()) in 48 s");
  EXPECT_THAT(v.next, StartsWith("let the script reach its training loop within the probe (a larger --budget)"));
  EXPECT_LT(v.next.find("--budget"), v.next.find("import saturate"));
}

TEST(Decide, AnUnreportedScriptWithoutTorchIsToldWhatWorks) {
  ProbeResult r = Silent(true);
  r.full.torch_loaded = false;
  Verdict v = Decide(r);
  EXPECT_THAT(v.evidence, HasSubstr("the script never imported torch, and only PyTorch scripts are instrumented "
                                    "automatically"));
  EXPECT_THAT(v.next, AllOf(HasSubstr("does not use PyTorch"), HasSubstr("import saturate"), HasSubstr("--parse")));
}

TEST(Decide, AnUnreportedScriptWithTheInstrumentationOffIsToldToTurnItOn) {
  ProbeResult r = Silent(true);
  r.auto_enabled = false;
  r.full.torch_loaded = true;
  Verdict v = Decide(r);
  EXPECT_THAT(v.evidence, HasSubstr("automatic instrumentation is off (--no-auto)"));
  EXPECT_THAT(v.next, StartsWith("probe without --no-auto"));
}

TEST(Decide, AnInstrumentationThatCouldNotStartIsNamed) {
  ProbeResult r = Silent(false);
  r.full.torch_loaded = true;
  r.full.auto_failure = "saturate: automatic instrumentation is off for this run: AttributeError: no DataLoader";
  Verdict v = Decide(r);
  EXPECT_THAT(v.evidence, HasSubstr("the automatic instrumentation could not start (automatic instrumentation is "
                                    "off for this run: AttributeError: no DataLoader)"));
  EXPECT_THAT(v.next, StartsWith("fix what stops the automatic instrumentation (stderr.log)"));
}

TEST(Decide, AScriptThatEndedBeforeItWasSeenSaysSo) {
  ProbeResult r = Silent(false);
  r.full.outcome.exit_class = run::ExitClass::kFinished;
  Verdict v = Decide(r);
  EXPECT_THAT(v.evidence, HasSubstr("(finished) and reported no progress: the script ended before saturate saw "
                                    "it import torch or reach a training step"));
  EXPECT_THAT(v.next, StartsWith("let the script run longer"));
}

TEST(Decide, AScriptThatReportedTooLittleIsToldToRunLonger) {
  ProbeResult r = Silent(false);
  r.full.helper_seen = true;
  r.full.auto_seen = true;
  Verdict v = Decide(r);
  EXPECT_THAT(v.evidence, Not(HasSubstr("torch")));
  EXPECT_THAT(v.next, StartsWith("probe again with a larger budget"));
}

TEST(NoReportsWhy, NamesTheReasonInTheUsersTerms) {
  ProbeResult r = Silent(false);
  EXPECT_EQ(NoReportsWhy(r), "the script ended before saturate saw it import torch or reach a training step");
  r.full.torch_loaded = false;
  EXPECT_EQ(NoReportsWhy(r), "the script never imported torch, and only PyTorch scripts are instrumented "
                             "automatically");
  r.full.auto_failure = "saturate: automatic instrumentation is off for this run: ImportError: x";
  EXPECT_EQ(NoReportsWhy(r), "the automatic instrumentation could not start (automatic instrumentation is off for "
                             "this run: ImportError: x)");
  r.auto_enabled = false;
  EXPECT_EQ(NoReportsWhy(r), "automatic instrumentation is off (--no-auto) and the script does not import saturate");
  r.parse = true;
  EXPECT_THAT(NoReportsWhy(r), StartsWith("with --parse the output lines are the only source of throughput"));
}

TEST(Decide, InterruptionIsNoted) {
  ProbeResult r = ComputeBoundWithHelper();
  r.interrupted = true;
  EXPECT_THAT(Decide(r).notes, Contains(HasSubstr("interrupted")));
}

// An interrupted probe: the full stage ran 4 s, 1.8 s of them steady, and its interval is ±192%.
ProbeResult InterruptedEarly() {
  ProbeResult r = Probe(false);
  r.helper = true;
  r.interrupted = true;
  r.full = Measured(core::StageKind::kFull, 212);
  r.full.estimate.steady_s = 1.8;
  r.full.estimate.warmup_s = 2.2;
  r.full.estimate.n_batches = 3;
  r.full.estimate.rel_half_width = 1.92;
  r.full.estimate.ci_low = -195;
  r.full.estimate.ci_high = 619;
  r.full.estimate.converged = false;
  r.full.observations = 9;
  r.full.outcome.duration_s = 4;
  r.loader = Skipped(core::StageKind::kLoader, "interrupted");
  r.compute = Skipped(core::StageKind::kCompute, "interrupted");
  return r;
}

TEST(Decide, TooLittleSteadyDataIsUnknownWithWhatWasSeen) {
  Verdict v = Decide(InterruptedEarly());
  EXPECT_FALSE(v.failed);
  EXPECT_EQ(v.bottleneck, "");
  EXPECT_EQ(v.cause, "not enough steady data");
  EXPECT_EQ(v.evidence, "not enough steady data: full 212 samples/s ±192% from 1.8 s of steady data (a verdict "
                        "needs at least 3 s and ±50%)");
  EXPECT_THAT(v.next, StartsWith("probe again and let it run"));
  EXPECT_THAT(v.notes, Contains(HasSubstr("interrupted")));
}

TEST(Decide, SteadyDataThresholdsAreBoundaries) {
  ProbeResult r = InterruptedEarly();
  r.full.estimate.steady_s = kMinSteadyS;
  r.full.estimate.rel_half_width = kMaxUsableRelHalfWidth;
  EXPECT_EQ(Decide(r).bottleneck, "compute") << "exactly at the thresholds is enough";
  r.full.estimate.rel_half_width = kMaxUsableRelHalfWidth * 1.01;
  EXPECT_EQ(Decide(r).cause, "not enough steady data") << "an interval too wide, even over enough seconds";
  r.full.estimate.rel_half_width = 0.1;
  r.full.estimate.steady_s = kMinSteadyS * 0.99;
  EXPECT_EQ(Decide(r).cause, "not enough steady data") << "too few seconds, even with a tight interval";
  r.full.estimate.steady_s = 12;
  r.full.estimate.rel_half_width = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Decide(r).bottleneck, "compute") << "no interval over enough seconds keeps its own note";
}

TEST(Decide, AStageShortOfSteadyDataIsLeftOutWithANote) {
  ProbeResult r = ComputeBoundWithHelper();
  Verdict before = Decide(r);
  r.interrupted = true;
  r.compute.estimate.steady_s = 1.2;
  r.compute.estimate.rel_half_width = 0.9;
  Verdict v = Decide(r);
  EXPECT_THAT(Notes(v), HasSubstr("left out of the verdict, not enough steady data: compute 1,200 samples/s ±90% "
                                  "from 1.2 s of steady data"));
  EXPECT_THAT(v.evidence, Not(HasSubstr("1,200")));
  EXPECT_NE(v.evidence, before.evidence);
}

TEST(Decide, IgnoresAnEarlierVerdict) {
  ProbeResult r = ComputeBoundWithHelper();
  Verdict first = Decide(r);
  r.verdict.bottleneck = "loader";
  r.verdict.notes = {"stale"};
  Verdict second = Decide(r);
  EXPECT_EQ(second.bottleneck, first.bottleneck);
  EXPECT_EQ(second.notes, first.notes);
}

}  // namespace
}  // namespace sat::probe
