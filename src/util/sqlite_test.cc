#include "util/sqlite.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace sat::sqlite {
namespace {

class SqliteTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "/sqlite_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

TEST_F(SqliteTest, BindsStepsAndReadsEveryType) {
  Database db;
  ASSERT_TRUE(db.Open("test file", File("t.db")));
  ASSERT_TRUE(db.Exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n INTEGER)", "cannot create"));
  Statement insert(db.handle(), "INSERT INTO t VALUES (?, ?, ?, ?)");
  insert.Bind(1, int64_t{-5000000000}).Bind(2, 2.5).Bind(3, std::string_view("a\0b", 3)).Bind(4, std::nullopt);
  ASSERT_EQ(insert.Step(), SQLITE_DONE);
  EXPECT_EQ(db.Changes(), 1);
  EXPECT_EQ(db.LastInsertRowid(), 1);
  insert.Reset();
  const std::optional<int> seven = 7;
  insert.Bind(1, ~uint64_t{0}).Bind(2, std::optional<double>()).Bind(3, "x").Bind(4, seven);
  ASSERT_EQ(insert.Step(), SQLITE_DONE);
  EXPECT_EQ(db.LastInsertRowid(), 2);

  Statement select(db.handle(), "SELECT i, r, s, n FROM t ORDER BY rowid");
  ASSERT_EQ(select.Step(), SQLITE_ROW);
  EXPECT_EQ(select.Int(0), -5000000000);
  EXPECT_EQ(select.Real(1), 2.5);
  EXPECT_EQ(select.Text(2), std::string("a\0b", 3)) << "text keeps its length, embedded NUL included";
  EXPECT_TRUE(select.Null(3));
  EXPECT_EQ(select.OptInt(3), std::nullopt);
  ASSERT_EQ(select.Step(), SQLITE_ROW);
  EXPECT_EQ(static_cast<uint64_t>(select.Int(0)), ~uint64_t{0}) << "a uint64 is stored as its 64 bits";
  EXPECT_EQ(select.OptReal(1), std::nullopt);
  EXPECT_EQ(select.Text(2), "x");
  EXPECT_EQ(select.OptInt32(3), 7);
  EXPECT_EQ(select.Step(), SQLITE_DONE);
}

TEST_F(SqliteTest, APrepareOrBindFailureSurfacesFromStep) {
  Database db;
  ASSERT_TRUE(db.Open("test file", File("t.db")));
  Statement bad(db.handle(), "SELECT nope FROM nowhere");
  EXPECT_EQ(bad.Bind(1, 1).Step(), SQLITE_ERROR);
  bad.Reset();
  EXPECT_EQ(bad.Step(), SQLITE_ERROR) << "a statement that never prepared stays failed after Reset";
  EXPECT_EQ(db.Fail("cannot read").message, "test file " + File("t.db") + ": cannot read: no such table: nowhere");
  EXPECT_EQ(db.Fail("x").exit_code, kExitFailure);

  Statement range(db.handle(), "SELECT ?");
  EXPECT_EQ(range.Bind(2, 1).Bind(1, 1).Step(), SQLITE_RANGE) << "the first failure is kept";
}

TEST_F(SqliteTest, TransactionCommitsOrRollsBack) {
  Database db;
  ASSERT_TRUE(db.Open("test file", File("t.db")));
  ASSERT_TRUE(db.Exec("CREATE TABLE t (v INTEGER NOT NULL)", "cannot create"));
  auto insert = [&](int v) {
    Statement s(db.handle(), "INSERT INTO t VALUES (?)");
    return s.Bind(1, v).Step() == SQLITE_DONE ? Status::Ok() : Status(db.Fail("cannot insert"));
  };
  ASSERT_TRUE(db.Transaction([&] { return insert(1); }));
  Status failed = db.Transaction([&]() -> Status {
    if (Status s = insert(2); !s) return s;
    return Error{"stop here"};
  });
  EXPECT_EQ(failed.message(), "stop here");
  ASSERT_TRUE(db.Transaction([&] { return insert(3); }));
  Statement count(db.handle(), "SELECT group_concat(v) FROM t");
  ASSERT_EQ(count.Step(), SQLITE_ROW);
  EXPECT_EQ(count.Text(0), "1,3") << "the failed body's insert was rolled back";
}

TEST_F(SqliteTest, DurableOpensInWalModeWithForeignKeys) {
  Database db;
  OpenOptions durable;
  durable.durable = true;
  ASSERT_TRUE(db.Open("journal", File("j.db"), durable));
  Statement mode(db.handle(), "PRAGMA journal_mode");
  ASSERT_EQ(mode.Step(), SQLITE_ROW);
  EXPECT_EQ(mode.Text(0), "wal");
  Statement keys(db.handle(), "PRAGMA foreign_keys");
  ASSERT_EQ(keys.Step(), SQLITE_ROW);
  EXPECT_EQ(keys.Int(0), 1);
  Statement sync(db.handle(), "PRAGMA synchronous");
  ASSERT_EQ(sync.Step(), SQLITE_ROW);
  EXPECT_EQ(sync.Int(0), 2) << "FULL";
}

// A journal on NFS (a sweep folder the Slurm nodes share): WAL's shared-memory index is not shared between hosts,
// so the rollback journal is used, still with synchronous=FULL and foreign keys.
TEST_F(SqliteTest, DurableOnANetworkFileSystemUsesTheRollbackJournal) {
  Database db;
  OpenOptions shared;
  shared.durable = true;
  shared.network_fs = true;
  ASSERT_TRUE(db.Open("journal", File("n.db"), shared));
  Statement mode(db.handle(), "PRAGMA journal_mode");
  ASSERT_EQ(mode.Step(), SQLITE_ROW);
  EXPECT_EQ(mode.Text(0), "delete");
  Statement keys(db.handle(), "PRAGMA foreign_keys");
  ASSERT_EQ(keys.Step(), SQLITE_ROW);
  EXPECT_EQ(keys.Int(0), 1);
}

TEST(IsNetworkFileSystem, KnowsTheSharedOnesAndNotTheLocalOnes) {
  for (long nfs : {0x6969L, 0xFF534D42L, 0x0BD00BD0L, 0x47504653L, 0x00C36400L, 0x19830326L, 0x65735546L}) {
    EXPECT_TRUE(IsNetworkFileSystem(nfs)) << std::hex << nfs;
  }
  for (long local : {0xEF53L /* ext4 */, 0x58465342L /* xfs */, 0x01021994L /* tmpfs */, 0x9123683EL /* btrfs */}) {
    EXPECT_FALSE(IsNetworkFileSystem(local)) << std::hex << local;
  }
}

TEST_F(SqliteTest, ABusyFileIsWaitedOnUpToTheTimeout) {
  Database a, b;
  ASSERT_TRUE(a.Open("test file", File("t.db")));
  OpenOptions impatient;
  impatient.busy_timeout_ms = 50;
  ASSERT_TRUE(b.Open("test file", File("t.db"), impatient));
  ASSERT_TRUE(a.Exec("CREATE TABLE t (v INTEGER)", "cannot create"));
  ASSERT_TRUE(a.Exec("BEGIN IMMEDIATE", "cannot begin"));
  Status busy = b.Transaction([] { return Status::Ok(); });
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.message(), "test file " + File("t.db") + ": cannot start a transaction: database is locked");
  ASSERT_TRUE(a.Exec("COMMIT", "cannot commit"));
  EXPECT_TRUE(b.Transaction([] { return Status::Ok(); }));
}

TEST_F(SqliteTest, NamesAFileThatCannotBeOpened) {
  Database db;
  Status s = db.Open("tune cache", File("missing/folder/t.db"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "tune cache " + File("missing/folder/t.db") + ": cannot open: unable to open database file");
}

TEST_F(SqliteTest, AFileThatIsNotSqliteFailsOnFirstUse) {
  std::ofstream(File("text.db")) << "this is not a database, but long enough to have a header of sorts.......\n";
  Database db;
  ASSERT_TRUE(db.Open("tune cache", File("text.db"))) << "SQLite reads the header lazily";
  Statement s(db.handle(), "PRAGMA user_version");
  EXPECT_EQ(s.Step(), SQLITE_NOTADB);
}

TEST_F(SqliteTest, ReadOnlyNeverCreatesNorWrites) {
  OpenOptions read_only;
  read_only.read_only = true;
  Database missing;
  EXPECT_FALSE(missing.Open("test file", File("none.db"), read_only));
  EXPECT_FALSE(std::filesystem::exists(File("none.db")));

  {
    Database db;
    OpenOptions durable;
    durable.durable = true;
    ASSERT_TRUE(db.Open("test file", File("t.db"), durable));
    ASSERT_TRUE(db.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)", "cannot create"));
  }
  Database db;
  ASSERT_TRUE(db.Open("test file", File("t.db"), read_only));
  EXPECT_EQ(sqlite3_db_readonly(db.handle(), "main"), 1);
  Statement read(db.handle(), "SELECT x FROM t");
  ASSERT_EQ(read.Step(), SQLITE_ROW);
  EXPECT_EQ(read.Int(0), 1);
  const Status write = db.Exec("INSERT INTO t VALUES (2)", "cannot insert");
  ASSERT_FALSE(write);
  EXPECT_NE(write.message().find("readonly"), std::string::npos) << write.message();
}

}  // namespace
}  // namespace sat::sqlite
