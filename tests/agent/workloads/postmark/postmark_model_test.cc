#include "agent/workloads/postmark/postmark_model.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using Kind = PostmarkOp::Kind;

// Runs the whole model: pool, transactions, teardown. Returns every op in order.
std::vector<PostmarkOp> RunModel(PostmarkModel& model, const PostmarkParams& p) {
  std::vector<PostmarkOp> ops;
  for (uint32_t i = 0; i < p.number; ++i) ops.push_back(model.CreateForPool());
  for (uint32_t i = 0; i < p.transactions; ++i) {
    PostmarkOp first, second;
    if (!model.Transaction(&first, &second)) break;
    ops.push_back(first);
    ops.push_back(second);
  }
  for (PostmarkOp op = model.NextTeardownDelete(); op.kind != Kind::kNone;
       op = model.NextTeardownDelete()) {
    ops.push_back(op);
  }
  return ops;
}

PostmarkParams Params(uint32_t number, uint64_t low, uint64_t high, uint32_t transactions) {
  PostmarkParams p;
  p.number = number;
  p.min_size = low;
  p.max_size = high;
  p.transactions = transactions;
  return p;
}

// PostMark keeps its byte totals in C floats; this is how it prints them (scalef()).
std::string PostmarkMegabytes(const std::vector<PostmarkOp>& ops, bool read) {
  float total = 0;
  for (const PostmarkOp& op : ops) {
    const bool counts =
        read ? op.kind == Kind::kRead : op.kind == Kind::kCreate || op.kind == Kind::kAppend;
    if (counts) total += static_cast<float>(op.bytes);
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", total / static_cast<float>(1 << 20));
  return text;
}

TEST(PostmarkRandom, MatchesPostmarksOwnGenerator) {
  // The first values of PostMark 1.53's genrand() after sgenrand(42), and after sgenrand(1),
  // printed by its own code.
  PostmarkRandom random(42);
  const uint64_t kAll = uint64_t{1} << 32;
  EXPECT_EQ(random.Below(kAll), 4179544424u);
  EXPECT_EQ(random.Below(kAll), 615236124u);
  EXPECT_EQ(random.Below(kAll), 4165290828u);
  EXPECT_EQ(random.Below(kAll), 3119652344u);
  EXPECT_EQ(random.Below(kAll), 1623863471u);
  EXPECT_EQ(PostmarkRandom(1).Below(kAll), 3556162021u);
}

TEST(PostmarkRandom, BelowZeroDrawsNothing) {
  PostmarkRandom a(7), b(7);
  EXPECT_EQ(a.Below(0), 0u);
  EXPECT_EQ(a.Below(1000), b.Below(1000));
}

struct PublishedRun {
  uint32_t number;
  uint64_t high;
  uint32_t transactions;
  uint64_t created, read, appended, deleted_alone;
  const char* megabytes_read;
  const char* megabytes_written;
};

// The three runs of reference/postmark-local-vs-aoe.txt (PostMark, seed 42, sizes from 1000):
// the model gives PostMark's counts exactly, and its byte totals as PostMark's floats print
// them.
TEST(PostmarkModel, ReproducesPublishedPostmarkRuns) {
  const PublishedRun runs[] = {
      {2000, 9000, 50000, 27170, 24986, 24697, 2340, "149.53", "161.85"},
      {2000, 90000, 50000, 27144, 24830, 25094, 2288, "1405.24", "1535.91"},
      {4000, 300000, 200000, 104099, 100246, 99560, 4198, "18995.06", "19738.85"},
  };
  for (const PublishedRun& run : runs) {
    SCOPED_TRACE(run.created);
    const PostmarkParams p = Params(run.number, 1000, run.high, run.transactions);
    PostmarkModel model(p);
    const std::vector<PostmarkOp> ops = RunModel(model, p);
    const PostmarkCounts& c = model.counts();
    EXPECT_EQ(c.created_alone, run.number);
    EXPECT_EQ(c.created_alone + c.created_mixed, run.created);
    EXPECT_EQ(c.read, run.read);
    EXPECT_EQ(c.appended, run.appended);
    EXPECT_EQ(c.deleted_alone, run.deleted_alone);
    EXPECT_EQ(c.deleted_alone + c.deleted_mixed, run.created);  // Everything goes.
    EXPECT_EQ(c.transactions, run.transactions);
    EXPECT_FALSE(c.out_of_files);
    EXPECT_EQ(PostmarkMegabytes(ops, true), run.megabytes_read);
    EXPECT_EQ(PostmarkMegabytes(ops, false), run.megabytes_written);
    EXPECT_EQ(model.live_files(), 0u);
    EXPECT_EQ(model.live_bytes(), 0u);
  }
}

// With a fixed seed the choices are fixed, and over many transactions they follow the
// biases: reads are a binomial(n, bias_read / 10) count, so 4 standard deviations bound them.
TEST(PostmarkModel, TransactionChoicesFollowTheBiases) {
  // Creates outnumber deletes by 20000 or so: the table (2 x number) has room for them.
  PostmarkParams p = Params(30000, 100, 5000, 100000);
  p.bias_read = 3;
  p.bias_create = 6;
  p.seed = 1234;
  PostmarkModel model(p);
  const std::vector<PostmarkOp> ops = RunModel(model, p);
  const PostmarkCounts& c = model.counts();
  const double n = p.transactions;
  auto within = [n](double count, double probability) {
    return std::abs(count - n * probability) < 4 * std::sqrt(n * probability * (1 - probability));
  };
  // An append to a file already at the high bound does nothing, so read + append <= n.
  EXPECT_TRUE(within(static_cast<double>(c.read), 0.3)) << c.read;
  EXPECT_LE(c.read + c.appended, p.transactions);
  EXPECT_TRUE(within(static_cast<double>(c.created_mixed), 0.6)) << c.created_mixed;
  EXPECT_EQ(c.created_mixed + c.deleted_mixed, p.transactions);  // The table never filled.
  // Same seed, same run, op for op.
  PostmarkModel again(p);
  const std::vector<PostmarkOp> ops2 = RunModel(again, p);
  ASSERT_EQ(ops.size(), ops2.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_EQ(ops[i].kind, ops2[i].kind) << i;
    ASSERT_EQ(ops[i].file, ops2[i].file) << i;
    ASSERT_EQ(ops[i].bytes, ops2[i].bytes) << i;
  }
  // Another seed, another run.
  p.seed = 1235;
  PostmarkModel other(p);
  RunModel(other, p);
  EXPECT_NE(other.counts().read, c.read);
}

TEST(PostmarkModel, SizesStayWithinTheBoundsAndOpsTouchLiveFiles) {
  PostmarkParams p = Params(200, 300, 700, 20000);
  p.subdirectories = 7;
  PostmarkModel model(p);
  std::vector<uint64_t> size(2 * p.number + 1, 0);  // By slot; 0 = free.
  std::set<uint64_t> names;
  std::set<uint32_t> dirs;
  for (const PostmarkOp& op : RunModel(model, p)) {
    ASSERT_LT(op.slot, 2 * p.number);
    switch (op.kind) {
      case Kind::kCreate:
        ASSERT_EQ(size[op.slot], 0u);
        ASSERT_GE(op.bytes, p.min_size);
        ASSERT_LT(op.bytes, p.max_size);  // PostMark draws LOW + RND(HIGH - LOW).
        ASSERT_TRUE(names.insert(op.file).second) << "name reused: " << op.file;
        ASSERT_EQ(op.file, names.size());  // Names count up from 1.
        ASSERT_LT(op.dir, p.subdirectories);
        dirs.insert(op.dir);
        size[op.slot] = op.bytes;
        break;
      case Kind::kRead:
        ASSERT_NE(size[op.slot], 0u);
        ASSERT_EQ(op.bytes, size[op.slot]);
        break;
      case Kind::kAppend:
        ASSERT_NE(size[op.slot], 0u);
        ASSERT_GE(op.bytes, 1u);
        size[op.slot] += op.bytes;
        ASSERT_LE(size[op.slot], p.max_size);
        break;
      case Kind::kDelete:
        ASSERT_NE(size[op.slot], 0u);
        size[op.slot] = 0;
        break;
      case Kind::kNone:
        break;
    }
  }
  EXPECT_EQ(dirs.size(), 7u);
  EXPECT_EQ(model.text().size(), p.max_size);
  for (char c : model.text()) ASSERT_TRUE(c >= 32 && c < 127);
}

TEST(PostmarkModel, ADisabledHalfDrawsNothing) {
  PostmarkParams p = Params(100, 500, 10000, 1000);
  p.bias_read = -1;
  PostmarkModel model(p);
  RunModel(model, p);
  EXPECT_EQ(model.counts().read, 0u);
  EXPECT_EQ(model.counts().appended, 0u);
  EXPECT_EQ(model.counts().created_mixed + model.counts().deleted_mixed, 1000u);

  p.bias_read = 5;
  p.bias_create = -1;
  PostmarkModel no_churn(p);
  RunModel(no_churn, p);
  EXPECT_EQ(no_churn.counts().created_mixed, 0u);
  EXPECT_EQ(no_churn.counts().deleted_mixed, 0u);
  EXPECT_EQ(no_churn.counts().deleted_alone, 100u);
}

TEST(PostmarkModel, RunsOutOfFilesAsPostmarkDoes) {
  PostmarkParams p = Params(10, 500, 1000, 1000);
  p.bias_create = 0;  // Every transaction deletes.
  PostmarkModel model(p);
  RunModel(model, p);
  EXPECT_TRUE(model.counts().out_of_files);
  EXPECT_EQ(model.counts().transactions, 10u);
  EXPECT_EQ(model.counts().deleted_mixed, 10u);
  EXPECT_EQ(model.counts().deleted_alone, 0u);
}

TEST(PostmarkModel, AFullTableCreatesNothing) {
  PostmarkParams p = Params(10, 500, 1000, 100);
  p.bias_create = 10;  // Every transaction creates; the table holds 2 x number.
  PostmarkModel model(p);
  RunModel(model, p);
  EXPECT_EQ(model.counts().created_mixed, 10u);
  EXPECT_EQ(model.counts().deleted_alone, 20u);
}

TEST(PostmarkModel, ResolveFillsPostmarksDefaults) {
  const PostmarkParams p = ResolvePostmark(stormark::v1::PostmarkSpec());
  EXPECT_EQ(p.number, 500u);
  EXPECT_EQ(p.min_size, 500u);
  EXPECT_EQ(p.max_size, 10000u);
  EXPECT_EQ(p.transactions, 500u);
  EXPECT_EQ(p.read_block_size, 512u);
  EXPECT_EQ(p.write_block_size, 512u);
  EXPECT_EQ(p.bias_read, 5);
  EXPECT_EQ(p.bias_create, 5);
  EXPECT_EQ(p.seed, 42u);
  EXPECT_FALSE(p.unbuffered);
  stormark::v1::PostmarkSpec spec;
  spec.set_bias_read(0);  // 0 is a bias, not "unset".
  spec.set_min_size_bytes(7);
  spec.set_max_size_bytes(7);
  EXPECT_EQ(ResolvePostmark(spec).bias_read, 0);
  EXPECT_EQ(ResolvePostmark(spec).min_size, 7u);
}

}  // namespace
}  // namespace stormark::agent
