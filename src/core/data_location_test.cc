#include "core/data_location.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kMounts = std::string(SATURATE_SOURCE_DIR) + "/tests/fixtures/mounts";

TEST(IsNetworkFs, ClassifiesRemoteAndLocalFilesystems) {
  for (const char* remote : {"nfs", "nfs4", "cifs", "smb3", "ceph", "lustre", "gpfs", "beegfs", "glusterfs",
                             "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.rclone", "fuse.ceph-fuse"}) {
    EXPECT_TRUE(IsNetworkFs(remote)) << remote;
  }
  for (const char* local : {"ext4", "xfs", "btrfs", "zfs", "overlay", "tmpfs", "9p", "virtiofs", "fuse",
                            "fuse.portal", "fuseblk", "nfsd", ""}) {
    EXPECT_FALSE(IsNetworkFs(local)) << local;
  }
}

TEST(LocateFiles, GroupsFilesPerMountMostFilesFirst) {
  std::vector<DataLocation> locs = LocateFiles(
      {"/mnt/data/train/b.jpg", "/mnt/data/train/a.jpg", "/home/ana/labels.csv", "/mnt/data/train/a.jpg",
       "/mnt/data/train/c.jpg", "relative/ignored.bin", "/mnt/hostshare/x.bin"},
      kMounts + "/cluster");
  ASSERT_EQ(locs.size(), 3u);
  EXPECT_EQ(locs[0].mount_point, "/mnt/data");
  EXPECT_EQ(locs[0].file_count, 3u);  // the duplicate counts once
  EXPECT_EQ(locs[0].path, "/mnt/data/train/a.jpg");
  EXPECT_EQ(locs[0].fs_type, "nfs4");
  EXPECT_EQ(locs[0].device, "fileserver:/export/datasets");
  EXPECT_TRUE(locs[0].network);
  EXPECT_EQ(locs[1].mount_point, "/home");
  EXPECT_FALSE(locs[1].network);
  EXPECT_EQ(locs[2].fs_type, "9p");
  EXPECT_FALSE(locs[2].network);
}

TEST(LocateFiles, FallsBackToProcMounts) {
  std::vector<DataLocation> locs = LocateFiles({"/workspace/data/a.parquet"}, kMounts + "/container");
  ASSERT_EQ(locs.size(), 1u);
  EXPECT_EQ(locs[0].fs_type, "nfs");
  EXPECT_TRUE(locs[0].network);
}

TEST(LocateFiles, WithoutAMountTableKeepsThePathsUnderAnUnknownMount) {
  std::vector<DataLocation> locs = LocateFiles({"/data/a", "/data/b"}, kMounts + "/does-not-exist");
  ASSERT_EQ(locs.size(), 1u);
  EXPECT_EQ(locs[0].file_count, 2u);
  EXPECT_EQ(locs[0].mount_point, "");
  EXPECT_EQ(locs[0].fs_type, "");
  EXPECT_FALSE(locs[0].network);
  EXPECT_THAT(LocateFiles({}, kMounts + "/cluster"), IsEmpty());
}

// A hand-made /proc/PID for OpenRegularFiles: fd links, fdinfo flags and a maps file, pointing at real files
// in a temporary folder.
class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sat-data-location-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "proc/42/fd");
    fs::create_directories(root_ / "proc/42/fdinfo");
    fs::create_directories(root_ / "data/train");
    fs::create_directories(root_ / "venv/lib/python3.11/site-packages/torch");
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string File(const std::string& rel) {
    std::string path = (root_ / rel).string();
    std::ofstream(path) << "x";
    return path;
  }
  void Fd(int n, const std::string& target, const char* flags = "0100000") {
    fs::create_symlink(target, root_ / "proc/42/fd" / std::to_string(n));
    std::ofstream(root_ / "proc/42/fdinfo" / std::to_string(n)) << "pos:\t0\nflags:\t" << flags << "\nmnt_id:\t26\n";
  }
  std::string Proc() const { return (root_ / "proc").string(); }

  fs::path root_;
};

TEST_F(FakeProc, KeepsRegularFilesOpenForReading) {
  std::string a = File("data/train/a.jpg");
  std::string b = File("data/train/b.jpg");
  std::string log = File("data/train.log");
  std::string both = File("data/cache.lmdb");
  Fd(0, "/dev/null");
  Fd(1, "pipe:[1234]");
  Fd(2, "socket:[5678]");
  Fd(3, "anon_inode:[eventfd]");
  Fd(4, b);
  Fd(5, a);
  Fd(6, log, "02100001");   // O_WRONLY | O_APPEND | O_CLOEXEC: a log being written
  Fd(7, both, "0100002");   // O_RDWR
  Fd(8, a);                 // the same file twice
  Fd(9, File("data/gone.bin") + " (deleted)");
  Fd(10, (root_ / "data/train").string());  // a directory
  Fd(11, File("venv/lib/python3.11/site-packages/torch/version.py"));
  EXPECT_THAT(OpenRegularFiles(42, Proc()), ElementsAre(both, a, b));
}

TEST_F(FakeProc, KeepsDataMappingsButNotCode) {
  std::string arrow = File("data/train/data-00000-of-00004.arrow");
  std::string spaced = File("data/train/my shard.npy");
  std::string python = File("venv/bin-python3.11");
  std::string lib = File("venv/lib/python3.11/site-packages/torch/libtorch_cpu.so");
  std::ofstream(root_ / "proc/42/maps")
      << "55d0c0a00000-55d0c0a5e000 r--p 00000000 103:02 1234 " << python << "\n"
      << "55d0c0a5e000-55d0c0d2c000 r-xp 0005e000 103:02 1234 " << python << "\n"
      << "7f0000000000-7f0000100000 r--s 00000000 103:02 99 " << arrow << "\n"
      << "7f0000100000-7f0000200000 r--p 00000000 103:02 98 " << spaced << "\n"
      << "7f0000200000-7f0000300000 r--p 00000000 103:02 97 " << lib << "\n"
      << "7f0000300000-7f0000400000 rw-p 00000000 00:00 0 \n"
      << "7f0000400000-7f0000500000 rw-s 00000000 00:05 7 /dev/shm/torch_1_2 (deleted)\n"
      << "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
      << "7f0000600000-7f0000700000 r--p 00000000 103:02 5 /usr/lib/locale/locale-archive\n";
  EXPECT_THAT(OpenRegularFiles(42, Proc()), ElementsAre(arrow, spaced));
}

TEST_F(FakeProc, AGoneProcessHasNoFiles) { EXPECT_THAT(OpenRegularFiles(4242, Proc()), IsEmpty()); }

TEST(OpenRegularFiles, SeesAFileThisProcessHasOpen) {
  char path[] = "/tmp/sat-open-file-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  int reader = open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  close(fd);  // mkstemp's descriptor is read-write; keep only the read-only one
  std::vector<std::string> files = OpenRegularFiles(getpid(), "/proc");
  close(reader);
  unlink(path);
  EXPECT_THAT(files, ::testing::Contains(std::string(path)));
  EXPECT_THAT(files, ::testing::Not(::testing::Contains(::testing::HasSubstr("libstdc++"))));
}

TEST(IsCodeOrSystemFile, TheInterpretersAndLibrariesFilesAreNotData) {
  for (const char* code : {"/usr/lib/python3/dist-packages/torch/__init__.py", "/home/a/train.py",
                           "/home/a/.venv/lib/python3.11/site-packages/x/data.bin", "/opt/x/libfoo.so.1",
                           "/proc/self/maps", "/dev/shm/torch_123", "/home/a/__pycache__/m.cpython-311.pyc"}) {
    EXPECT_TRUE(IsCodeOrSystemFile(code)) << code;
  }
  for (const char* data : {"/data/images/0/000001.jpg", "/tmp/staged/shard-0.tar", "/run/media/usb/x.npy",
                           "/home/a/python.txt"}) {
    EXPECT_FALSE(IsCodeOrSystemFile(data)) << data;
  }
}

}  // namespace
}  // namespace sat::core
