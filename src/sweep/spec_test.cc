#include "sweep/spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "sweep/plan.h"
#include "sweep/test_spec.h"
#include "util/test_mutations.h"

namespace sat::sweep {
namespace {

using testing::ErrorOf;
using testing::MustParse;
using nlohmann::json;
using Argv = std::vector<std::string>;

CommandContext TestContext() {
  CommandContext c;
  c.interpreter = "python";
  c.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "DATA_DIR") return "/data";
    return std::nullopt;
  };
  return c;
}

std::vector<RunParams> MustExpand(const Spec& spec, uint64_t seed = 0) {
  auto runs = ExpandRuns(spec, seed);
  EXPECT_TRUE(runs) << runs.error().message;
  return runs.ok() ? *runs : std::vector<RunParams>();
}

const Parameter* Find(const Spec& spec, std::string_view name) {
  for (const auto& p : spec.parameters) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// W&B's quickstart: distributions inferred from the keys present.
constexpr std::string_view kQuickstart = R"(
program: train.py
method: random
name: quickstart
metric:
  name: val_loss
  goal: minimize
parameters:
  learning_rate:
    min: 0.0001
    max: 0.1
  batch_size:
    values: [16, 32, 64]
  epochs:
    value: 5
  optimizer:
    values: ["adam", "sgd"]
  layers:
    min: 1
    max: 4
run_cap: 20
)";

TEST(ParseSpec, WandbQuickstartInfersDistributions) {
  const Spec spec = MustParse(kQuickstart);
  EXPECT_EQ(spec.method, Method::kRandom);
  EXPECT_EQ(spec.program, "train.py");
  EXPECT_EQ(spec.name, "quickstart");
  ASSERT_TRUE(spec.metric);
  EXPECT_EQ(spec.metric->name, "val_loss");
  EXPECT_EQ(spec.metric->goal, Goal::kMinimize);
  EXPECT_EQ(spec.run_cap, 20);
  EXPECT_EQ(spec.command, (Argv{"${env}", "${interpreter}", "${program}", "${args}"}));

  std::vector<std::string> names;
  for (const auto& p : spec.parameters) names.push_back(p.name);
  EXPECT_EQ(names, (Argv{"batch_size", "epochs", "layers", "learning_rate", "optimizer"}));  // sorted
  EXPECT_EQ(Find(spec, "learning_rate")->distribution, Distribution::kUniform);
  EXPECT_EQ(Find(spec, "layers")->distribution, Distribution::kIntUniform);
  EXPECT_EQ(Find(spec, "batch_size")->distribution, Distribution::kCategorical);
  EXPECT_EQ(Find(spec, "batch_size")->values, (std::vector<json>{16, 32, 64}));
  EXPECT_EQ(Find(spec, "epochs")->distribution, Distribution::kConstant);
  EXPECT_EQ(Find(spec, "optimizer")->values, (std::vector<json>{"adam", "sgd"}));

  // Saturate's defaults.
  EXPECT_TRUE(spec.saturate.gpus.empty());
  EXPECT_EQ(spec.saturate.max_per_gpu, 0);
  EXPECT_TRUE(spec.saturate.shape.empty());
  EXPECT_DOUBLE_EQ(spec.saturate.memory_margin, 0.1);
  EXPECT_EQ(spec.saturate.retries, 2);
  EXPECT_EQ(spec.saturate.timeout_s, 0);
  EXPECT_TRUE(spec.warnings.empty());
}

// W&B's docs example with explicit distributions, plus saturate's own section.
constexpr std::string_view kDistributions = R"(
program: train.py
method: random
project: my-project
metric: {goal: maximize, name: val_acc, target: 0.99}
early_terminate:
  type: hyperband
  min_iter: 3
parameters:
  lr: {distribution: log_uniform_values, min: 1e-5, max: 1e-1}
  dropout: {distribution: q_uniform, min: 0.0, max: 0.5, q: 0.1}
  hidden: {distribution: q_log_uniform_values, min: 32, max: 1024, q: 8}
  weight_decay: {distribution: normal, mu: 0.0001, sigma: 0.00001}
  momentum: {distribution: categorical, values: [0.9, 0.99], probabilities: [0.75, 0.25]}
saturate:
  gpus: [0, 1]
  max_per_gpu: 2
  memory_margin: 0.15
  timeout: 30m
  retries: 1
  metric_pattern: 'acc=(?P<val_acc>[0-9.]+) loss=(?P<val_loss>[0-9.]+)'
  env: {OMP_NUM_THREADS: 4, TAG: sweep}
  seed: 7
  runs: 12
  shape: [hidden]
  auto: off
  price_per_gpu_hour: 2.5
)";

TEST(ParseSpec, BayesPlansRunsWithoutValues) {
  const Spec spec = MustParse(
      "program: t.py\nmethod: bayes\nmetric: {name: loss}\nrun_cap: 3\n"
      "early_terminate: {type: hyperband, max_iter: 27, s: 2, strict: true}\n"
      "parameters:\n  lr: {min: 0.001, max: 0.1}\n");
  EXPECT_EQ(spec.method, Method::kBayes);
  EXPECT_EQ(MethodName(spec.method), "bayes");
  ASSERT_TRUE(spec.early_terminate);
  EXPECT_EQ(spec.early_terminate->max_iter, 27);
  EXPECT_EQ(spec.early_terminate->s, 2);
  EXPECT_TRUE(spec.early_terminate->strict);
  const auto runs = MustExpand(spec, 5);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0].values.is_null());
  EXPECT_NE(runs[0].key, runs[1].key);
  EXPECT_EQ(MustExpand(spec, 5)[2].key, runs[2].key);
  EXPECT_NE(MustExpand(spec, 6)[2].key, runs[2].key);
  EXPECT_NE(SpecHash(spec, 5), SpecHash(spec, 6));
}

TEST(ParseSpec, ExplicitDistributionsAndSaturateSection) {
  const Spec spec = MustParse(kDistributions);
  const Parameter* lr = Find(spec, "lr");
  ASSERT_TRUE(lr);
  EXPECT_EQ(lr->distribution, Distribution::kLogUniformValues);
  EXPECT_DOUBLE_EQ(lr->min, 1e-5);  // "1e-5" is a string to YAML 1.1 but reads as a number here
  const Parameter* dropout = Find(spec, "dropout");
  EXPECT_EQ(dropout->distribution, Distribution::kQUniform);
  EXPECT_DOUBLE_EQ(dropout->q, 0.1);
  EXPECT_FALSE(dropout->q_is_integer);
  EXPECT_TRUE(Find(spec, "hidden")->q_is_integer);
  EXPECT_DOUBLE_EQ(Find(spec, "weight_decay")->sigma, 0.00001);
  EXPECT_EQ(Find(spec, "momentum")->probabilities, (std::vector<double>{0.75, 0.25}));
  ASSERT_TRUE(spec.metric);
  EXPECT_EQ(spec.metric->goal, Goal::kMaximize);
  EXPECT_EQ(spec.metric->target, 0.99);

  const SaturateOptions& o = spec.saturate;
  EXPECT_EQ(o.gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(o.max_per_gpu, 2);
  EXPECT_EQ(o.shape, (std::vector<std::string>{"hidden"}));
  EXPECT_DOUBLE_EQ(o.memory_margin, 0.15);
  EXPECT_DOUBLE_EQ(o.timeout_s, 1800);
  EXPECT_EQ(o.retries, 1);
  EXPECT_EQ(o.env, (std::map<std::string, std::string>{{"OMP_NUM_THREADS", "4"}, {"TAG", "sweep"}}));
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.price_per_gpu_hour, 2.5);
  EXPECT_FALSE(
      MustParse("program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\n").saturate.price_per_gpu_hour);
  EXPECT_EQ(o.runs, 12);
  EXPECT_FALSE(o.auto_instrumentation);
  EXPECT_TRUE(MustParse("program: t.py\nmethod: grid\nparameters:\n  x: {value: 1}\n").saturate.auto_instrumentation);
  EXPECT_EQ(*RunCount(spec), 12);
  EXPECT_TRUE(spec.warnings.empty());
  ASSERT_TRUE(spec.early_terminate);
  EXPECT_EQ(spec.early_terminate->min_iter, 3);
  EXPECT_EQ(spec.early_terminate->eta, 3);

  for (const auto& run : MustExpand(spec, 7)) {
    const double lr_value = run.values["lr"].get<double>();
    EXPECT_GE(lr_value, 1e-5 * (1 - 1e-12));
    EXPECT_LE(lr_value, 1e-1 * (1 + 1e-12));
    EXPECT_TRUE(run.values["hidden"].is_number_integer());
    EXPECT_EQ(run.values["hidden"].get<int64_t>() % 8, 0);
  }
}

// wandb/sweeps examples/nested-params/using-cli/sweep-nested.yaml.
constexpr std::string_view kNested = R"(
description: sweep using nested params
program: train-nested-cli.py
project: nested-examples
method: grid
metric:
  name: loss
  goal: minimize
parameters:
  batch_size:
    values: [32, 64]
  optimizer:
    parameters:
      lr:
        values: [0.001, 0.0001]
      nadam:
        parameters:
          beta:
            values: [0.9, 0.95]
)";

TEST(ParseSpec, NestedParametersAreFlattenedWithDots) {
  const Spec spec = MustParse(kNested);
  std::vector<std::string> names;
  for (const auto& p : spec.parameters) names.push_back(p.name);
  EXPECT_EQ(names, (Argv{"batch_size", "optimizer.lr", "optimizer.nadam.beta"}));
  const auto runs = MustExpand(spec);
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(RenderCommand(spec, runs[0], TestContext()),
            (Argv{"/usr/bin/env", "python", "train-nested-cli.py", "--batch_size=32", "--optimizer.lr=0.001",
                  "--optimizer.nadam.beta=0.9"}));
}

TEST(ExpandRuns, GridIsTheProductInNameOrderLastFastest) {
  const Spec spec = MustParse(R"(
program: train.py
method: grid
parameters:
  opt: {values: [adam, sgd]}
  bs: {values: [32, 64, 32]}
  seed: {value: 1}
)");
  const auto runs = MustExpand(spec);
  ASSERT_EQ(runs.size(), 4u);  // the repeated 32 is visited once
  std::vector<std::string> order;
  for (const auto& r : runs) order.push_back(r.values.dump());
  EXPECT_EQ(order, (Argv{R"({"bs":32,"opt":"adam","seed":1})", R"({"bs":32,"opt":"sgd","seed":1})",
                         R"({"bs":64,"opt":"adam","seed":1})", R"({"bs":64,"opt":"sgd","seed":1})"}));
  std::set<std::string> keys;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(runs[i].key.size(), 12u);
    keys.insert(runs[i].key);
  }
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(MustExpand(spec)[2].key, runs[2].key);  // stable
}

TEST(ExpandRuns, GridOverIntAndQUniformAndRunCap) {
  const Spec spec = MustParse(R"(
program: train.py
method: grid
run_cap: 5
parameters:
  layers: {min: 1, max: 3}
  dropout: {distribution: q_uniform, min: 0, max: 1, q: 0.5}
)");
  EXPECT_EQ(*RunCount(spec), 5);  // 3 x 2 = 6, capped
  const auto runs = MustExpand(spec);
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[0].values, json::parse(R"({"dropout": 0.0, "layers": 1})"));
  EXPECT_EQ(runs[4].values, json::parse(R"({"dropout": 0.5, "layers": 2})"));
}

TEST(ExpandRuns, RandomIsReproducibleAndExtendable) {
  Spec spec = MustParse(kQuickstart);
  const auto a = MustExpand(spec, 11);
  const auto b = MustExpand(spec, 11);
  const auto c = MustExpand(spec, 12);
  ASSERT_EQ(a.size(), 20u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].values, b[i].values);
    EXPECT_EQ(a[i].key, b[i].key);
  }
  EXPECT_NE(a[0].values, c[0].values);
  spec.run_cap = 30;
  const auto more = MustExpand(spec, 11);
  ASSERT_EQ(more.size(), 30u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(more[i].values, a[i].values);  // earlier runs unchanged
}

TEST(ExpandRuns, RandomRunsWithEqualValuesKeepDistinctKeys) {
  const Spec spec = MustParse(R"(
program: train.py
method: random
run_cap: 3
parameters:
  epochs: {value: 5}
)");
  const auto runs = MustExpand(spec, 1);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].values, runs[1].values);
  EXPECT_NE(runs[0].key, runs[1].key);
  EXPECT_NE(runs[1].key, runs[2].key);
}

// The argv W&B's agent builds: --name=str(value), parameters in name order.
TEST(RenderCommand, MacrosRenderExactlyAsWandb) {
  const Spec spec = MustParse(R"(
program: train.py
method: grid
parameters:
  lr: {value: 0.01}
  tiny: {value: 0.00001}
  batch_size: {value: 32}
  amp: {value: true}
  compile: {value: false}
  layers: {value: [64, 32]}
  name: {value: "it's"}
command:
  - ${env}
  - ${interpreter}
  - ${program}
  - --data=${envvar:DATA_DIR}/train
  - ${envvar:UNSET_VAR}
  - ${args}
)");
  const auto runs = MustExpand(spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(
      RenderCommand(spec, runs[0], TestContext()),
      (Argv{"/usr/bin/env", "python", "train.py", "--data=/data/train", "UNSET_VAR", "--amp=True", "--batch_size=32",
            "--compile=False", "--layers=[64, 32]", "--lr=0.01", "--name=it's", "--tiny=1e-05"}));

  Spec other = spec;
  other.command = {"${args_no_hyphens}"};
  EXPECT_EQ(
      RenderCommand(other, runs[0], TestContext()),
      (Argv{"amp=True", "batch_size=32", "compile=False", "layers=[64, 32]", "lr=0.01", "name=it's", "tiny=1e-05"}));
  other.command = {"${args_no_boolean_flags}"};
  EXPECT_EQ(RenderCommand(other, runs[0], TestContext()),
            (Argv{"--amp", "--batch_size=32", "--layers=[64, 32]", "--lr=0.01", "--name=it's", "--tiny=1e-05"}));
  other.command = {"${args_no_equals}"};
  EXPECT_EQ(RenderCommand(other, runs[0], TestContext()),
            (Argv{"--amp", "True", "--batch_size", "32", "--compile", "False", "--layers", "[64, 32]", "--lr", "0.01",
                  "--name", "it's", "--tiny", "1e-05"}));
  other.command = {"${program}", "${args_json}"};
  EXPECT_EQ(RenderCommand(other, runs[0], TestContext()),
            (Argv{"train.py", R"({"amp": true, "batch_size": 32, "compile": false, "layers": [64, 32], )"
                              R"("lr": 0.01, "name": "it's", "tiny": 1e-05})"}));
}

TEST(RenderCommand, YamlTypingFollowsPyYaml) {
  // 1e-3 has no dot, so PyYAML (and W&B) keep the text; 1.0e-3 is a float; quoted values are strings.
  const Spec spec = MustParse(R"(
program: train.py
method: grid
command: [python3, "${program}", --epochs, 3, "${args}"]
parameters:
  a: {value: 1e-3}
  b: {value: 1.0e-3}
  c: {value: "0.10"}
  d: {value: 0.10}
  e: {value: yes}
  f: {value: ~}
)");
  const auto runs = MustExpand(spec);
  EXPECT_EQ(RenderCommand(spec, runs[0], TestContext()),
            (Argv{"python3", "train.py", "--epochs", "3", "--a=1e-3", "--b=0.001", "--c=0.10", "--d=0.1", "--e=True",
                  "--f=None"}));
}

TEST(RenderCommand, InterpreterIsInjectableAndFoundOnPath) {
  const Spec spec = MustParse(R"(
program: train.py
method: grid
parameters: {x: {value: 1}}
)");
  CommandContext context = TestContext();
  context.interpreter = "/opt/py/bin/python3.11";
  EXPECT_EQ(RenderCommand(spec, MustExpand(spec)[0], context),
            (Argv{"/usr/bin/env", "/opt/py/bin/python3.11", "train.py", "--x=1"}));

  // A PATH with a `python` executable gives "python"; one without gives "python3".
  char dir_template[] = "/tmp/sweep_path_XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string python = dir + "/python";
  std::ofstream(python) << "#!/bin/sh\n";
  chmod(python.c_str(), 0755);
  const char* old_path = getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  setenv("PATH", ("/nonexistent:" + dir).c_str(), 1);
  EXPECT_EQ(CommandContext::FromSystem().interpreter, "python");
  setenv("PATH", "/nonexistent", 1);
  EXPECT_EQ(CommandContext::FromSystem().interpreter, "python3");
  setenv("PATH", saved.c_str(), 1);
  unlink(python.c_str());
  rmdir(dir.c_str());
}

TEST(SpecFromGrid, ShortFormFillsPlaceholdersInsideItems) {
  auto spec =
      SpecFromGrid({"lr=0.1,0.01", "bs=32,64"}, {"python3", "train.py", "--lr", "{lr}", "--bs={bs}", "--tag={{lr}}"});
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->method, Method::kGrid);
  EXPECT_EQ(spec->command_style, CommandStyle::kPlaceholders);
  const auto runs = MustExpand(*spec);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_TRUE(runs[0].values["bs"].is_number_integer());
  EXPECT_TRUE(runs[0].values["lr"].is_number_float());
  EXPECT_EQ(RenderCommand(*spec, runs[1], TestContext()),
            (Argv{"python3", "train.py", "--lr", "0.01", "--bs=32", "--tag={lr}"}));
  EXPECT_EQ(RenderCommand(*spec, runs[2], TestContext()),
            (Argv{"python3", "train.py", "--lr", "0.1", "--bs=64", "--tag={lr}"}));
}

TEST(SpecFromGrid, Errors) {
  auto message = [](const Argv& grid, const Argv& command) {
    auto spec = SpecFromGrid(grid, command);
    EXPECT_FALSE(spec);
    EXPECT_EQ(spec.ok() ? 0 : spec.error().exit_code, kExitUsage);
    return spec.ok() ? std::string() : spec.error().message;
  };
  EXPECT_EQ(message({"lr=0.1"}, {"python", "t.py", "--lr={rl}"}),
            "command item '--lr={rl}': {rl} is not a --grid parameter (did you mean 'lr'?)");
  EXPECT_EQ(message({"lr=0.1", "bs=1,2"}, {"python", "t.py", "--lr={lr}"}),
            "--grid bs is not used in the command; put {bs} where its value goes");
  EXPECT_EQ(message({"lr0.1"}, {"x", "{lr}"}),
            "--grid 'lr0.1': expected NAME=VALUE[,VALUE...], e.g. --grid lr=0.1,0.01");
  EXPECT_EQ(message({"lr=1", "lr=2"}, {"x", "{lr}"}), "--grid lr is given twice; list all its values in one --grid");
  EXPECT_EQ(message({"lr=1,,2"}, {"x", "{lr}"}), "--grid 'lr=1,,2': a value is empty");
  EXPECT_EQ(message({"lr=1"}, {"x", "{lr"}), "command item '{lr': unmatched '{'; write {{ for a literal brace");
  EXPECT_EQ(message({"lr=1"}, {}),
            "the command is missing: give it after --, with {NAME} where each --grid value goes");
}

TEST(SpecHash, ChangesWithThePlanOnly) {
  const Spec base = MustParse(kDistributions);
  const std::string h = SpecHash(base, 7);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(SpecHash(MustParse(kDistributions), 7), h);
  EXPECT_NE(SpecHash(base, 8), h);  // random search: the seed decides the runs

  Spec scheduling = base;
  scheduling.saturate.timeout_s = 60;
  scheduling.saturate.gpus = {3};
  scheduling.saturate.env["X"] = "1";
  EXPECT_EQ(SpecHash(scheduling, 7), h);

  Spec params = base;
  params.parameters[0].max *= 2;
  EXPECT_NE(SpecHash(params, 7), h);
  Spec runs = base;
  runs.saturate.runs = 13;
  EXPECT_NE(SpecHash(runs, 7), h);
  Spec command = base;
  command.program = "other.py";
  EXPECT_NE(SpecHash(command, 7), h);

  const Spec grid = MustParse(kNested);
  EXPECT_EQ(SpecHash(grid, 1), SpecHash(grid, 2));  // grid search ignores the seed
}

TEST(ParseSpecErrors, MalformedYamlCarriesLineAndColumn) {
  EXPECT_EQ(ErrorOf("program: train.py\nmethod: grid\nparameters:\n  lr: [0.1, 0.2\n"),
            "sweep.yaml:5:1: end of sequence flow not found");
  EXPECT_EQ(ErrorOf("program: train.py\n  method: grid\n"), "sweep.yaml:2:9: illegal map value");
}

TEST(ParseSpecErrors, SemanticErrorsCarryLineColumnAndPath) {
  EXPECT_EQ(ErrorOf(R"(program: train.py
method: random
run_cap: 4
parameters:
  bs:
    values: [1, 2]
  lr:
    min: 0.5
    max: 0.1
)"),
            "sweep.yaml:8:10: parameters.lr: 'min' (0.5) is above 'max' (0.1)");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: grid\nparamters:\n  x: {value: 1}\n"),
            "sweep.yaml:3:1: unknown key 'paramters' (did you mean 'parameters'?)");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: random\nrun_cap: 2\nparameters:\n  lr:\n    mn: 0.1\n    max: 1.0\n"),
            "sweep.yaml:6:5: parameters.lr: unknown key 'mn' (did you mean 'min'?)");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: bayes\nrun_cap: 3\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:2:9: method 'bayes' models the sweep's metric: add 'metric' with its name and goal");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: bayes\nmetric: {name: loss}\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:2:9: method 'bayes' needs a run count: set run_cap, or runs in the saturate section");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: grid\nmetric: {name: loss}\nearly_terminate: {type: hyperband, "
                    "max_iter: 27}\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:4:18: early_terminate: 'max_iter' needs 's', the number of bands");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: grid\nearly_terminate: {type: hyperband, min_iter: 2}\n"
                    "parameters:\n  x: {value: 1}\n"),
            "sweep.yaml:3:18: early_terminate: hyperband compares runs by the sweep's metric: add 'metric'");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: grid\nmetric: {name: loss}\nearly_terminate: {type: hyperband, "
                    "min_iter: 2, eta: 1}\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:4:54: early_terminate: 'eta' must be above 1");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: gird\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:2:9: unknown method 'gird' (did you mean 'grid'?)");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: random\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml:2:9: method 'random' needs a run count: set run_cap, or runs in the saturate section");
  EXPECT_EQ(ErrorOf("program: t.py\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml: 'method' is missing; use grid, random or bayes");
  EXPECT_EQ(ErrorOf("method: grid\nparameters:\n  x: {value: 1}\n"),
            "sweep.yaml: 'program' is missing, and the command runs ${program}");
}

TEST(ParseSpecErrors, ParameterRules) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n";
  EXPECT_EQ(ErrorOf(head + "  lr: {min: 0.001, max: 0.1}\n"),
            "sweep.yaml:4:3: parameters.lr: grid search needs discrete values, and 'uniform' is continuous; give "
            "'values', use int_uniform or q_uniform, or use method: random");
  EXPECT_EQ(ErrorOf(head + "  n: {distribution: int_uniform, min: 1, max: 4.5}\n"),
            "sweep.yaml:4:47: parameters.n: int_uniform needs whole numbers; '4.5' is not one");
  EXPECT_EQ(ErrorOf(head + "  lr: {distribution: log_uniform_values, min: 0, max: 1}\n"),
            "sweep.yaml:4:47: parameters.lr: 'min' must be above 0 for log_uniform_values: values are drawn on a "
            "log scale");
  EXPECT_EQ(ErrorOf(head + "  o: {values: [a, b], probabilities: [0.5, 0.4]}\n"),
            "sweep.yaml:4:38: parameters.o: 'probabilities' add up to 0.9, not 1");
  EXPECT_EQ(ErrorOf(head + "  o: {values: [a, b], probabilities: [0.5]}\n"),
            "sweep.yaml:4:38: parameters.o: 'probabilities' must be a list of 2 numbers, one per value");
  EXPECT_EQ(ErrorOf(head + "  lr: {distribution: uniform, min: 0, max: 1, q: 0.1}\n"),
            "sweep.yaml:4:47: parameters.lr: 'q' does not apply to distribution 'uniform' (it takes min, max)");
  EXPECT_EQ(ErrorOf(head + "  lr: {distribution: unifrom, min: 0, max: 1}\n"),
            "sweep.yaml:4:22: parameters.lr: unknown distribution 'unifrom' (did you mean 'uniform'?)");
  EXPECT_NE(ErrorOf(head + "  lr: {distribution: beta}\n").find("distribution 'beta' is not supported"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(head + "  lr: {distribution: normal, sigma: -1}\n"),
            "sweep.yaml:4:37: parameters.lr: 'sigma' must not be negative");
  EXPECT_EQ(ErrorOf(head + "  lr: {max: 1}\n"),
            "sweep.yaml:4:7: parameters.lr: needs 'value', 'values', 'min' and 'max', or a 'distribution'");
  EXPECT_EQ(ErrorOf(head + "  lr: {min: abc, max: 1}\n"),
            "sweep.yaml:4:13: parameters.lr: 'min' must be a number, not 'abc'");
  EXPECT_EQ(ErrorOf(head + "  lr: {min: 1, max: 1}\n"),
            "sweep.yaml:4:13: parameters.lr: 'min' (1) is equal to 'max' (1)");
  EXPECT_EQ(ErrorOf(head + "  1lr: {value: 1}\n"),
            "sweep.yaml:4:3: parameters: '1lr' is not a valid parameter name: use letters, digits, '_', '.' and "
            "'-', starting with a letter or '_'");
  EXPECT_EQ(ErrorOf(head + "  lr: {value: 1}\n  lr: {value: 2}\n"),
            "sweep.yaml:5:3: parameters: 'lr' is given twice (first at line 4)");
  EXPECT_EQ(ErrorOf(head + "  a.b: {value: 1}\n  a:\n    parameters:\n      b: {value: 2}\n"),
            "sweep.yaml:7:7: parameters: 'a.b' is defined twice (once nested, once with dots)");
  EXPECT_EQ(ErrorOf(head + "  lr: [0.1, 0.2]\n"),
            "sweep.yaml:4:7: parameters.lr: must be a mapping of settings (value, values, distribution, min, max, "
            "...)");
  EXPECT_EQ(ErrorOf("program: t.py\nmethod: grid\nrun_cap: 1\nparameters:\n  n: {min: 0, max: 1000000000}\n"),
            "sweep.yaml:5:3: parameters.n: int_uniform from 0 to 1000000000 gives 1000000001 grid values, more than "
            "the 100000 runs a sweep may plan");
}

TEST(ParseSpecErrors, CommandMetricAndSaturateSection) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  x: {value: 1}\n";
  EXPECT_EQ(ErrorOf(head + "command: [python, \"${progam}\"]\n"),
            "sweep.yaml:5:19: command: unknown macro '${progam}' (did you mean 'program'?)");
  EXPECT_EQ(ErrorOf(head + "command: [python, t.py, \"${args_json_file}\"]\n"),
            "sweep.yaml:5:25: command: the macro '${args_json_file}' is not supported");
  EXPECT_EQ(ErrorOf(head + "command: python t.py\n"),
            "sweep.yaml:5:10: command: must be a non-empty list of arguments");
  EXPECT_EQ(ErrorOf(head + "metric: {name: loss, goal: minimise}\n"),
            "sweep.yaml:5:28: metric: unknown goal 'minimise' (did you mean 'minimize'?)");
  EXPECT_EQ(ErrorOf(head + "metrics: [{name: a}, {name: b}]\n"),
            "sweep.yaml:5:1: several 'metrics' (multi-objective search) are not supported; give one 'metric'");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  max_per_gpus: 2\n"),
            "sweep.yaml:6:3: saturate: unknown key 'max_per_gpus' (did you mean 'max_per_gpu'?)");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  timeout: soon\n"),
            "sweep.yaml:6:12: saturate: 'timeout' must be a duration above 0 and at most 366 days like 30m, 90s or "
            "1h30m, or 'none' for no limit, not 'soon'");
  // Infinite and huge limits overflowed the attempt's deadline: every attempt timed out at once.
  for (const char* bad : {"inf", ".inf", "1e300", "0"}) {
    EXPECT_NE(ErrorOf(head + "saturate:\n  timeout: " + bad + "\n").find("'none' for no limit"), std::string::npos)
        << bad;
  }
  auto unlimited = ParseSpec(head + "saturate:\n  timeout: none\n", "sweep.yaml");
  ASSERT_TRUE(unlimited) << unlimited.error().message;
  EXPECT_EQ(unlimited->saturate.timeout_s, 0);
  for (const char* bad : {"0", "-1", "free"}) {
    EXPECT_NE(ErrorOf(head + "saturate:\n  price_per_gpu_hour: " + bad + "\n").find("price_per_gpu_hour"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(ErrorOf(head + "saturate:\n  price_per_gpu_hour: 0\n"),
            "sweep.yaml:6:23: saturate: 'price_per_gpu_hour' must be a price above 0, e.g. 2.50");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  memory_margin: 1.5\n"),
            "sweep.yaml:6:18: saturate: 'memory_margin' must be a fraction in [0, 1), e.g. 0.1");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  retries: -1\n"), "sweep.yaml:6:12: saturate: 'retries' must be at least 0");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  gpus: [0, 0]\n"), "sweep.yaml:6:9: saturate: 'gpus' lists GPU 0 twice");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  auto: 0\n"),
            "sweep.yaml:6:9: saturate: 'auto' must be true or false, not '0'");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  metric_pattern: 'loss=([0-9.]+'\n"),
            "sweep.yaml:6:19: saturate: 'metric_pattern' is not a valid regular expression: missing closing "
            "parenthesis at offset 13");
  EXPECT_EQ(ErrorOf(head + "saturate:\n  metric_pattern: 'loss=([0-9.]+)'\n"),
            "sweep.yaml:6:19: saturate: 'metric_pattern' needs named groups, one per metric, e.g. "
            "'val_loss=(?P<val_loss>[0-9.e+-]+)'");
  EXPECT_EQ(ErrorOf(head + "run_cap: 0\n"), "sweep.yaml:5:10: 'run_cap' must be at least 1");
  EXPECT_EQ(ErrorOf(""), "sweep.yaml: the sweep spec is empty");
}

TEST(SpecWarnings, WarnsWhenNoPatternGroupCapturesTheMetric) {
  Spec spec = MustParse(
      "program: t.py\nmethod: grid\nparameters:\n  x: {value: 1}\nmetric: {name: acc}\n"
      "saturate:\n  metric_pattern: 'loss=(?P<loss>[0-9.]+)'\n");
  std::vector<std::string> warnings = SpecWarnings(spec);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "metric 'acc' is not a named group of saturate.metric_pattern (loss); it can only come from the saturate "
            "Python helper");
  // The command line's --metric-pattern replaces the file's: the warning follows the pattern in force, not the
  // groups of the one it replaced.
  spec.saturate.metric_pattern = "acc=(?P<acc>[0-9.]+)";
  EXPECT_TRUE(SpecWarnings(spec).empty());
  spec.saturate.metric_pattern = "val=(?P<val>[0-9.]+)";
  ASSERT_EQ(SpecWarnings(spec).size(), 1u);
  EXPECT_NE(SpecWarnings(spec)[0].find("(val)"), std::string::npos);
  // And --metric: a metric the pattern reads draws no warning.
  spec.metric->name = "val";
  EXPECT_TRUE(SpecWarnings(spec).empty());
}

TEST(LoadSpecFile, ReadsAFileAndNamesItInErrors) {
  char path_template[] = "/tmp/sweep_spec_XXXXXX";
  const int fd = mkstemp(path_template);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string path = path_template;
  std::ofstream(path) << "program: t.py\nmethod: grid\nparameters:\n  lr:\n    min: 0.5\n    max: 0.1\n";
  auto spec = LoadSpecFile(path);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().message, path + ":5:10: parameters.lr: 'min' (0.5) is above 'max' (0.1)");
  unlink(path.c_str());
  auto missing = LoadSpecFile(path);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot read sweep spec " + path + ": No such file or directory");
}

// Without libFuzzer the same bad specs as fuzz/sweep_spec meet the parser here: a spec or an error naming the
// problem (exit code 2), never anything else.
TEST(ParseSpec, SeededRandomSpecs) {
  for (const std::string& yaml : SeededMutations(SATURATE_SOURCE_DIR "/fuzz/corpus/sweep_spec", 3000, 19)) {
    auto spec = ParseSpec(yaml, "fuzz.yaml");
    if (!spec) {
      EXPECT_EQ(spec.error().exit_code, kExitUsage) << spec.error().message;
    }
  }
}

}  // namespace
}  // namespace sat::sweep

namespace sat::sweep {
namespace {

TEST(SpecFromGrid, AStagedPathMacroIsKeptForTheRunToFill) {
  auto spec = SpecFromGrid({"lr=0.1"}, {"python3", "t.py", "--data=${stage:0}/train", "--lr", "{lr}"});
  ASSERT_TRUE(spec) << spec.error().message;
  const auto runs = MustExpand(*spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(RenderCommand(*spec, runs[0])[2], "--data=${stage:0}/train");
}

// Nine nested anchors of ten items each: under 1 KB that expanded to 10^9 values, 4 GB, then an abort with
// bad_alloc (exit 134). Refused before anything is expanded, naming the file and the cap (issue 30).
std::string AliasBomb() {
  std::string yaml = "method: grid\nprogram: t.py\nparameters:\n  x:\n    value:\n      a0: &a0 [lol";
  for (int i = 1; i < 10; ++i) yaml += ", lol";
  yaml += "]\n";
  for (int level = 1; level <= 8; ++level) {
    yaml += fmt::format("      a{}: &a{} [*a{}", level, level, level - 1);
    for (int i = 1; i < 10; ++i) yaml += fmt::format(", *a{}", level - 1);
    yaml += "]\n";
  }
  return yaml;
}

TEST(ParseSpec, AnAliasBombIsRefusedNamingTheCap) {
  auto spec = ParseSpec(AliasBomb(), "bomb.yaml");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().exit_code, kExitUsage);
  EXPECT_NE(spec.error().message.find("bomb.yaml:"), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("more than 100000 values (an alias counts each time it is used)"),
            std::string::npos)
      << spec.error().message;
}

// 600 levels were refused by yaml-cpp's own guard as "bad file"; 100 were read. Both name the cap now.
TEST(ParseSpec, DeepNestingIsRefusedNamingTheCap) {
  for (int depth : {100, 600}) {
    const std::string yaml = "method: grid\nprogram: t.py\nparameters:\n  x:\n    value: " +
                             std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']') +
                             "\n";
    auto spec = ParseSpec(yaml, "deep.yaml");
    ASSERT_FALSE(spec) << depth;
    EXPECT_EQ(spec.error().exit_code, kExitUsage);
    EXPECT_NE(spec.error().message.find("deep.yaml:"), std::string::npos) << spec.error().message;
    EXPECT_NE(spec.error().message.find("a spec may nest at most 64"), std::string::npos) << spec.error().message;
  }
  // 30 levels are a (strange) value, not an error of size.
  const std::string ok = "method: grid\nprogram: t.py\nparameters:\n  x:\n    value: " + std::string(30, '[') +
                         std::string(30, ']') + "\n";
  EXPECT_TRUE(ParseSpec(ok, "ok.yaml"));
}

TEST(LoadSpecFile, AFileLargerThanTheCapIsRefusedUnread) {
  char path_template[] = "/tmp/sweep_large_XXXXXX";
  const int fd = mkstemp(path_template);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string yaml = "method: grid\nprogram: t.py\nparameters:\n  x:\n    values: [1]\n";
  yaml += "description: '" + std::string(2 << 20, 'x') + "'\n";
  std::ofstream(path_template) << yaml;
  auto spec = LoadSpecFile(path_template);
  unlink(path_template);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().exit_code, kExitUsage);
  EXPECT_NE(spec.error().message.find("is larger than 1.0 MiB, the most a spec may be"), std::string::npos)
      << spec.error().message;
}

}  // namespace
}  // namespace sat::sweep
