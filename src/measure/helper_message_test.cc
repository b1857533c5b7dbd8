#include "measure/helper_message.h"

#include <gtest/gtest.h>

#include "util/test_mutations.h"

namespace sat::measure {
namespace {

constexpr const char* kHeader = R"("v":1,"run":"r1","pid":4242,"t":123.5)";

std::string Message(std::string_view type, std::string_view fields) {
  std::string s = std::string("{") + kHeader + R"(,"type":")" + std::string(type) + "\"";
  if (!fields.empty()) s += "," + std::string(fields);
  return s + "}";
}

TEST(HelperMessage, Progress) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "progress", R"("steps":10,"samples":640,"wait_s":0.5,"step_s":2.25,"phases":{"metrics":0.25,"bad":null},)"
                  R"("mem":{"allocated":100,"reserved":200,"peak":150},"metrics":{"loss":2.5,"acc":null},"extra":1)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kProgress);
  EXPECT_EQ(m->run, "r1");
  EXPECT_EQ(m->pid, 4242);
  EXPECT_DOUBLE_EQ(m->t, 123.5);
  EXPECT_EQ(m->steps, 10);
  EXPECT_DOUBLE_EQ(m->samples, 640);
  EXPECT_DOUBLE_EQ(m->wait_s, 0.5);
  EXPECT_DOUBLE_EQ(m->step_s, 2.25);
  EXPECT_EQ(m->phases, (std::map<std::string, double>{{"metrics", 0.25}}));
  EXPECT_EQ(m->metrics, (std::map<std::string, double>{{"loss", 2.5}}));
  EXPECT_EQ(m->mem_allocated_bytes, 100);
  EXPECT_EQ(m->mem_reserved_bytes, 200);
  EXPECT_EQ(m->mem_peak_bytes, 150);
  EXPECT_EQ(m->raw["extra"], 1);
}

TEST(HelperMessage, ProgressWithoutMemory) {
  Result<HelperMessage> m = ParseHelperMessage(Message("progress", R"("steps":0,"samples":0,"mem":null)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->mem_peak_bytes.has_value());
  EXPECT_TRUE(m->phases.empty());
}

TEST(HelperMessage, DoneNeedsReason) {
  Result<HelperMessage> m = ParseHelperMessage(Message("done", R"("steps":3,"samples":96,"reason":"exhausted")"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kDone);
  EXPECT_EQ(m->done_reason, "exhausted");
  EXPECT_EQ(m->steps, 3);
  Result<HelperMessage> bad = ParseHelperMessage(Message("done", R"("steps":3,"samples":96)"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "missing field 'reason'");
}

TEST(HelperMessage, HelloAndKnob) {
  Result<HelperMessage> hello =
      ParseHelperMessage(Message("hello", R"("mode":"loader","python":"3.11.2","torch":null,"device":"cpu")"));
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_EQ(hello->mode, "loader");
  EXPECT_EQ(hello->python, "3.11.2");
  EXPECT_EQ(hello->torch, std::nullopt);
  EXPECT_EQ(hello->device, "cpu");

  Result<HelperMessage> knob =
      ParseHelperMessage(Message("knob", R"("name":"batch_size","value":64,"default":32,"source":"saturate")"));
  ASSERT_TRUE(knob) << knob.error().message;
  EXPECT_EQ(knob->knob_name, "batch_size");
  EXPECT_EQ(knob->knob_value, 64);
  EXPECT_EQ(knob->knob_default, 32);
  EXPECT_EQ(knob->knob_source, "saturate");
}

TEST(HelperMessage, AutomaticHelloKnobAndExcludedTime) {
  Result<HelperMessage> hello = ParseHelperMessage(
      Message("hello", R"("mode":"train","python":"3.11.2","torch":"1.13.0","device":"cpu","auto":true)"));
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_TRUE(hello->automatic);
  EXPECT_EQ(hello->torch, "1.13.0");
  Result<HelperMessage> plain = ParseHelperMessage(Message("hello", R"("mode":"train","auto":null)"));
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->automatic);

  Result<HelperMessage> knob = ParseHelperMessage(Message(
      "knob", R"("name":"batch_size","value":32,"default":32,"source":"default","auto":true,)"
              R"("error":"a loader with a batch_sampler has no batch size to set")"));
  ASSERT_TRUE(knob) << knob.error().message;
  EXPECT_TRUE(knob->automatic);
  EXPECT_EQ(knob->knob_error, "a loader with a batch_sampler has no batch size to set");
  Result<HelperMessage> explicit_knob = ParseHelperMessage(Message("knob", R"("name":"lr","value":0.1)"));
  ASSERT_TRUE(explicit_knob) << explicit_knob.error().message;
  EXPECT_FALSE(explicit_knob->automatic);
  EXPECT_FALSE(explicit_knob->knob_error.has_value());

  Result<HelperMessage> progress =
      ParseHelperMessage(Message("progress", R"("steps":4,"samples":128,"excluded_s":2.5)"));
  ASSERT_TRUE(progress) << progress.error().message;
  EXPECT_EQ(progress->excluded_s, 2.5);
  Result<HelperMessage> done =
      ParseHelperMessage(Message("done", R"("steps":4,"samples":128,"excluded_s":0,"reason":"no-loader")"));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->excluded_s, 0.0);
  EXPECT_EQ(done->done_reason, "no-loader");
  Result<HelperMessage> without = ParseHelperMessage(Message("progress", R"("steps":4,"samples":128)"));
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_FALSE(without->excluded_s.has_value());
}

TEST(HelperMessage, TrainingLoader) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "loader", R"("key":"train.py:57#0","site":"train.py:57","dataset":"ImageFolder","iterable":false,)"
                R"("num_workers":4,"pin_memory":true,"batch_size":64,"prefetch_factor":2,)"
                R"("persistent_workers":false,"injected":{"workers":4,"pin_memory":true},)"
                R"("samples_from":"loader","step_at":"optimizer","others":1,"drop_last":false)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kLoader);
  const LoaderInfo& l = m->loader;
  EXPECT_EQ(l.key, "train.py:57#0");
  EXPECT_EQ(l.site, "train.py:57");
  EXPECT_EQ(l.dataset, "ImageFolder");
  EXPECT_EQ(l.iterable, false);
  EXPECT_EQ(l.num_workers, 4);
  EXPECT_EQ(l.pin_memory, true);
  EXPECT_EQ(l.batch_size, 64);
  EXPECT_EQ(l.prefetch_factor, 2);
  EXPECT_EQ(l.persistent_workers, false);
  EXPECT_EQ(l.injected, (std::map<std::string, nlohmann::json>{{"workers", 4}, {"pin_memory", true}}));
  EXPECT_EQ(l.samples_from, "loader");
  EXPECT_EQ(l.step_at, "optimizer");
  EXPECT_EQ(l.others, 1);
  EXPECT_EQ(m->raw["drop_last"], false);
}

TEST(HelperMessage, LoaderOfAStepWithoutADataLoader) {
  // What the automatic layer sends for a script that batches by hand: no loader fields at all.
  Result<HelperMessage> m = ParseHelperMessage(
      Message("loader", R"("key":null,"site":null,"others":0,"samples_from":"model_input","step_at":"backward")"));
  ASSERT_TRUE(m) << m.error().message;
  const LoaderInfo& l = m->loader;
  EXPECT_FALSE(l.key.has_value());
  EXPECT_FALSE(l.site.has_value());
  EXPECT_FALSE(l.dataset.has_value());
  EXPECT_FALSE(l.iterable.has_value());
  EXPECT_FALSE(l.num_workers.has_value());
  EXPECT_FALSE(l.pin_memory.has_value());
  EXPECT_FALSE(l.batch_size.has_value());
  EXPECT_FALSE(l.prefetch_factor.has_value());
  EXPECT_FALSE(l.persistent_workers.has_value());
  EXPECT_TRUE(l.injected.empty());
  EXPECT_EQ(l.samples_from, "model_input");
  EXPECT_EQ(l.step_at, "backward");
  EXPECT_EQ(l.others, 0);

  // A loader with a batch_sampler and no workers: batch_size and prefetch_factor are null.
  Result<HelperMessage> sampler = ParseHelperMessage(Message(
      "loader", R"("key":"t.py:9#1","site":"t.py:9","num_workers":0,"batch_size":null,"prefetch_factor":null)"));
  ASSERT_TRUE(sampler) << sampler.error().message;
  EXPECT_EQ(sampler->loader.num_workers, 0);
  EXPECT_FALSE(sampler->loader.batch_size.has_value());
  EXPECT_FALSE(sampler->loader.prefetch_factor.has_value());
  EXPECT_FALSE(sampler->loader.others.has_value());
}

TEST(HelperMessage, RejectsWhatIsNotAMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"garbage", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"v":2,"type":"progress"})", "protocol version 2 (this saturate speaks 1)"},
      {Message("launch", ""), "unknown message type 'launch'"},
      {R"({"v":1,"type":"hello","run":"","t":1})", "missing field 'pid'"},
      {R"({"v":1,"type":"hello","run":"","pid":"12","t":1})", "field 'pid' is not an integer"},
      {Message("progress", R"("samples":1)"), "missing field 'steps'"},
      {Message("progress", R"("steps":-1,"samples":1)"), "field 'steps' is negative"},
      {Message("progress", R"("steps":1,"samples":1,"phases":[1])"), "field 'phases' is not an object"},
      {Message("progress", R"("steps":1,"samples":1,"phases":{"io":"x"})"), "field 'phases.io' is not a number"},
      {Message("progress", R"("steps":1,"samples":1,"mem":{"peak":"big"})"), "field 'mem.peak' is not a number"},
      {Message("knob", R"("value":1)"), "missing field 'name'"},
      {Message("hello", R"("torch":2)"), "field 'torch' is not a string"},
      {Message("hello", R"("auto":"yes")"), "field 'auto' is not true or false"},
      {Message("knob", R"("name":"workers","auto":1)"), "field 'auto' is not true or false"},
      {Message("knob", R"("name":"workers","error":false)"), "field 'error' is not a string"},
      {Message("progress", R"("steps":1,"samples":1,"excluded_s":-0.5)"), "field 'excluded_s' is negative"},
      {Message("done", R"("steps":1,"samples":1,"excluded_s":"x","reason":"exit")"),
       "field 'excluded_s' is not a number"},
      {Message("loader", R"("key":57)"), "field 'key' is not a string"},
      {Message("loader", R"("num_workers":-1)"), "field 'num_workers' is negative"},
      {Message("loader", R"("pin_memory":"yes")"), "field 'pin_memory' is not true or false"},
      {Message("loader", R"("injected":[1])"), "field 'injected' is not an object"},
      {Message("loader", R"("others":"two")"), "field 'others' is not a number"},
  };
  for (const auto& [text, error] : cases) {
    Result<HelperMessage> m = ParseHelperMessage(text);
    ASSERT_FALSE(m) << text;
    EXPECT_EQ(m.error().message, error) << text;
  }
}

TEST(HelperMessage, MetricsFromReport) {
  Result<HelperMessage> m = ParseHelperMessage(Message("metrics", R"("metrics":{"loss":0.31,"acc":null},"steps":7)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kMetrics);
  EXPECT_DOUBLE_EQ(m->metrics.at("loss"), 0.31);
  EXPECT_EQ(m->metrics.count("acc"), 0u);
  EXPECT_EQ(m->steps, 7);
  EXPECT_FALSE(ParseHelperMessage(Message("metrics", R"("metrics":{"loss":"low"})")));
}

TEST(HelperMessage, FlopsOfTheFirstStep) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "flops", R"("per_step":3072,"per_sample":768,"samples":4,"method":"module_hooks","dtype":"bf16","tf32":false,)"
               R"("device":"cuda")"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kFlops);
  EXPECT_DOUBLE_EQ(m->flops.per_step, 3072);
  EXPECT_DOUBLE_EQ(m->flops.per_sample, 768);
  EXPECT_DOUBLE_EQ(m->flops.samples, 4);
  EXPECT_EQ(m->flops.method, "module_hooks");
  EXPECT_EQ(m->flops.dtype, "bf16");
  EXPECT_FALSE(m->flops.tf32);
  EXPECT_EQ(m->flops.device, "cuda");
  EXPECT_EQ(ParseHelperMessage(Message("flops", R"("per_sample":1,"method":"flop_counter")")).error().message,
            "missing field 'per_step'");
  EXPECT_EQ(ParseHelperMessage(Message("flops", R"("per_step":-1,"per_sample":1,"method":"x")")).error().message,
            "field 'per_step' is negative");
  EXPECT_EQ(ParseHelperMessage(Message("flops", R"("per_step":1,"per_sample":1,"method":"x","tf32":1)"))
                .error()
                .message,
            "field 'tf32' is not true or false");
}

TEST(HelperMessage, OptionsNamedForSecretsLoseTheirValues) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "flags", R"("parser":"argparse","options":[)"
               R"({"dest":"api_key","flags":["--api-key"],"kind":"value","value":"sk-123","default":null,"given":true},)"
               R"({"dest":"hub","flags":["--hf-token"],"kind":"value","value":"hf_x","default":"hf_d","given":true},)"
               R"({"dest":"batch_size","flags":["--batch-size"],"kind":"value","value":64,"default":32,"given":true}])"));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->flag_options.size(), 3u);
  EXPECT_EQ(m->flag_options[0].value, "***");
  EXPECT_TRUE(m->flag_options[0].default_value.is_null());
  EXPECT_EQ(m->flag_options[1].value, "***");
  EXPECT_EQ(m->flag_options[1].default_value, "***");
  EXPECT_EQ(m->flag_options[2].value, 64);
  EXPECT_EQ(FlagOptionJson(m->flag_options[0]).dump().find("sk-123"), std::string::npos);
}

TEST(HelperMessage, FlopsNotCountedSayWhy) {
  Result<HelperMessage> m = ParseHelperMessage(Message("flops", R"("skipped":"the model is compiled")"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->flops.skipped, "the model is compiled");
  EXPECT_DOUBLE_EQ(m->flops.per_step, 0);
  m = ParseHelperMessage(Message("flops", R"("skipped":"")"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->flops.skipped, "the helper did not count");
  EXPECT_FALSE(ParseHelperMessage(Message("flops", R"("skipped":3)")));
}

TEST(HelperMessage, TraceWrittenOrWhyNot) {
  Result<HelperMessage> m = ParseHelperMessage(Message("trace", R"("path":"/tmp/out/trace.json","steps":3)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kTrace);
  EXPECT_EQ(m->trace.path, "/tmp/out/trace.json");
  EXPECT_EQ(m->trace.steps, 3);
  EXPECT_FALSE(m->trace.error.has_value());
  m = ParseHelperMessage(Message("trace", R"("path":null,"steps":0,"error":"cannot start torch.profiler")"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->trace.path.has_value());
  EXPECT_EQ(m->trace.error, "cannot start torch.profiler");
}

TEST(HelperMessage, FilesTheProcessOpened) {
  Result<HelperMessage> m =
      ParseHelperMessage(Message("files", R"("paths":["/data/a.jpg","relative.jpg","/data/\u00e9t\u00e9.jpg"],"opens":7)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kFiles);
  // A relative path names nothing without the sender's working folder: left out.
  EXPECT_EQ(m->files.paths, (std::vector<std::string>{"/data/a.jpg", "/data/\u00e9t\u00e9.jpg"}));
  EXPECT_EQ(m->files.opens, 7);
  EXPECT_TRUE(m->files.writes.empty());
  m = ParseHelperMessage(Message("files", R"("paths":[],"writes":["/nfs/ckpt/model.pt"],"opens":7)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->files.writes, (std::vector<std::string>{"/nfs/ckpt/model.pt"}));
  EXPECT_FALSE(ParseHelperMessage(Message("files", R"("paths":[],"writes":"/a")")));
  // A count update alone, with no new path.
  m = ParseHelperMessage(Message("files", R"("paths":[],"opens":9)"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->files.paths.empty());
  EXPECT_EQ(m->files.opens, 9);
  EXPECT_FALSE(ParseHelperMessage(Message("files", R"("opens":1)")));
  EXPECT_FALSE(ParseHelperMessage(Message("files", R"("paths":"/data/a.jpg")")));
  EXPECT_FALSE(ParseHelperMessage(Message("files", R"("paths":[3])")));
  EXPECT_FALSE(ParseHelperMessage(Message("files", R"("paths":[],"opens":-1)")));
  EXPECT_EQ(MessageTypeName(MessageType::kFiles), "files");
}

TEST(HelperMessage, ScriptFlagsAndAKnobsOwnFlag) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "flags", R"("parser":"argparse","options":[{"dest":"batch_size","flags":["--batch-size","--bs"],)"
               R"("kind":"value","value":32,"default":64,"given":true},)"
               R"({"dest":"pin_memory","flags":["--pin-memory"],"kind":"store_true","value":false,"default":false,)"
               R"("given":false}])"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kFlags);
  EXPECT_EQ(m->flags_parser, "argparse");
  ASSERT_EQ(m->flag_options.size(), 2u);
  const FlagOption& bs = m->flag_options[0];
  EXPECT_EQ(bs.dest, "batch_size");
  EXPECT_EQ(bs.strings, (std::vector<std::string>{"--batch-size", "--bs"}));
  EXPECT_EQ(bs.kind, "value");
  EXPECT_EQ(bs.value, 32);
  EXPECT_EQ(bs.default_value, 64);
  EXPECT_TRUE(bs.given);
  EXPECT_EQ(m->flag_options[1].value, false);
  // Round trip through the JSON the cache keeps.
  auto back = FlagOptionFromJson(FlagOptionJson(bs));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->strings, bs.strings);
  EXPECT_EQ(back->value, 32);

  EXPECT_FALSE(ParseHelperMessage(Message("flags", R"("options":[{"dest":"x","kind":"value"}])")));
  EXPECT_FALSE(ParseHelperMessage(Message("flags", R"("options":[{"dest":"x","kind":"value","flags":[1]}])")));

  Result<HelperMessage> k = ParseHelperMessage(
      Message("knob", R"("name":"workers","value":2,"default":2,"source":"default","flag":"--workers")"));
  ASSERT_TRUE(k) << k.error().message;
  EXPECT_EQ(k->knob_flag, "--workers");
}

TEST(HelperMessage, TypeNames) {
  EXPECT_EQ(MessageTypeName(MessageType::kFlops), "flops");
  EXPECT_EQ(MessageTypeName(MessageType::kTrace), "trace");
  EXPECT_EQ(MessageTypeName(MessageType::kMetrics), "metrics");
  EXPECT_EQ(MessageTypeName(MessageType::kHello), "hello");
  EXPECT_EQ(MessageTypeName(MessageType::kDone), "done");
  EXPECT_EQ(MessageTypeName(MessageType::kLoader), "loader");
}

// Without libFuzzer the same bad datagrams as fuzz/helper_message meet the parser here: a message or an error.
TEST(ParseHelperMessage, SeededRandomDatagrams) {
  for (const std::string& d : SeededMutations(SATURATE_SOURCE_DIR "/fuzz/corpus/helper_message", 20000, 19)) {
    (void)ParseHelperMessage(d);
  }
}

}  // namespace
}  // namespace sat::measure

namespace sat::measure {
namespace {

TEST(HelperMessage, RanksOfADistributedJob) {
  Result<HelperMessage> hello = ParseHelperMessage(
      R"({"v":1,"type":"hello","run":"r","pid":7,"t":1.0,"mode":"train","auto":true,"rank":1,"world_size":2,)"
      R"("local_rank":1})");
  ASSERT_TRUE(hello) << hello.error().message;
  ASSERT_TRUE(hello->rank_info);
  EXPECT_EQ(hello->rank_info->rank, 1);
  EXPECT_EQ(hello->rank_info->world_size, 2);
  EXPECT_EQ(hello->rank_info->local_rank, 1);
  Result<HelperMessage> loader = ParseHelperMessage(
      R"({"v":1,"type":"loader","run":"r","pid":7,"t":1.0,"key":"t.py:9#0","batch_size":32,"last_batch":5,)"
      R"("batchnorm":true,"drop_last":false,"rank":0,"world_size":4})");
  ASSERT_TRUE(loader) << loader.error().message;
  EXPECT_EQ(loader->loader.last_batch, 5);
  EXPECT_EQ(loader->loader.batchnorm, true);
  EXPECT_EQ(loader->loader.drop_last, false);
  EXPECT_EQ(loader->rank_info->local_rank, 0);  // absent: its rank
  Result<HelperMessage> progress = ParseHelperMessage(
      R"({"v":1,"type":"progress","run":"r","pid":7,"t":1.0,"steps":3,"samples":96,"rank":1,)"
      R"("before_backward_s":0.25})");
  ASSERT_TRUE(progress) << progress.error().message;
  EXPECT_EQ(progress->rank, 1);
  EXPECT_EQ(progress->before_backward_s, 0.25);
  // A single process sends none of them.
  Result<HelperMessage> single = ParseHelperMessage(R"({"v":1,"type":"hello","run":"r","pid":7,"t":1.0})");
  ASSERT_TRUE(single);
  EXPECT_FALSE(single->rank_info);
}

TEST(HelperMessage, RankOutsideItsWorldIsRefused) {
  for (const char* fields : {R"("rank":2,"world_size":2)", R"("rank":0)", R"("world_size":2)", R"("rank":-1,"world_size":2)"}) {
    Result<HelperMessage> m =
        ParseHelperMessage(std::string(R"({"v":1,"type":"hello","run":"r","pid":7,"t":1.0,)") + fields + "}");
    EXPECT_FALSE(m) << fields;
  }
}

}  // namespace
}  // namespace sat::measure

namespace sat::measure {
namespace {

TEST(HelperMessage, IntegerCountersBeyondInt64AreRefused) {
  // Found by fuzz.helper_message: a 113-digit memory figure was cast to int64 (undefined behaviour).
  Result<HelperMessage> m = ParseHelperMessage(
      R"({"v":1,"type":"progress","run":"","pid":1,"t":1,"steps":1,"samples":1,"mem":{"allocated":1e113}})");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("mem.allocated' is too large"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace sat::measure
