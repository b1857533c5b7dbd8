#include "telemetry/mount_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace sat::telemetry {
namespace {

const std::string kMounts = std::string(SATURATE_SOURCE_DIR) + "/tests/fixtures/mounts";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<MountEntry> Cluster() { return ParseMountTable(ReadAll(kMounts + "/cluster/self/mountinfo")); }

TEST(ParseMountTable, ReadsMountinfoAndSkipsJunk) {
  std::vector<MountEntry> mounts = Cluster();
  ASSERT_EQ(mounts.size(), 13u);
  EXPECT_EQ(mounts[0].mount_point, "/");
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_EQ(mounts[0].fs_type, "ext4");
  EXPECT_EQ(mounts[0].device, "/dev/nvme0n1p2");
  EXPECT_EQ(mounts[5].mount_point, "/mnt/data");
  EXPECT_EQ(mounts[5].fs_type, "nfs4");
  EXPECT_EQ(mounts[5].device, "fileserver:/export/datasets");
  // Optional fields ("shared:47 master:9") sit before the separator.
  EXPECT_EQ(mounts[12].mount_point, "/datasets");
  EXPECT_EQ(mounts[12].fs_type, "fuse.gcsfuse");
}

TEST(ParseMountTable, DecodesOctalEscapes) {
  std::vector<MountEntry> mounts = Cluster();
  EXPECT_EQ(mounts[7].mount_point, "/mnt/team share");
  EXPECT_EQ(mounts[7].device, "//nas/team share");
  std::vector<MountEntry> odd = ParseMountTable("/dev/sdb1 /mnt/a\\011b\\134c\\08 ext4 rw 0 0\n");
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].mount_point, "/mnt/a\tb\\c\\08");  // "\08" is not octal and stays as written
}

TEST(ParseMountTable, ReadsProcMountsFormat) {
  std::vector<MountEntry> mounts = ParseMountTable(ReadAll(kMounts + "/container/mounts"));
  ASSERT_EQ(mounts.size(), 6u);
  EXPECT_EQ(mounts[0].mount_point, "/");
  EXPECT_EQ(mounts[0].fs_type, "overlay");
  EXPECT_EQ(mounts[0].root, "");  // /proc/mounts does not say
  EXPECT_EQ(mounts[4].mount_point, "/workspace/data");
  EXPECT_EQ(mounts[4].fs_type, "nfs");
  EXPECT_EQ(mounts[4].device, "10.1.2.3:/vol/train");
}

TEST(FindMount, PicksTheLongestPrefixOnAComponentBoundary) {
  std::vector<MountEntry> mounts = Cluster();
  EXPECT_EQ(FindMount(mounts, "/mnt/data/imagenet/train/n01440764/x.JPEG")->fs_type, "nfs4");
  EXPECT_EQ(FindMount(mounts, "/mnt/data/cache/shard-0001.tar")->fs_type, "xfs");
  EXPECT_EQ(FindMount(mounts, "/mnt/data")->mount_point, "/mnt/data");
  // "/mnt/database" shares characters with "/mnt/data" but not a component.
  EXPECT_EQ(FindMount(mounts, "/mnt/database/x")->mount_point, "/");
  EXPECT_EQ(FindMount(mounts, "/home/ana/data.npy")->device, "/dev/nvme0n1p3");
  EXPECT_EQ(FindMount(mounts, "/mnt/team share/a.csv")->fs_type, "cifs");
}

TEST(FindMount, TheLaterOfTwoMountsOnOnePointWins) {
  EXPECT_EQ(FindMount(Cluster(), "/scratch/run1/data.bin")->fs_type, "lustre");
}

TEST(FindMount, NeedsAnAbsolutePathAndAMatch) {
  EXPECT_FALSE(FindMount(Cluster(), "data/x.bin").has_value());
  EXPECT_FALSE(FindMount({}, "/data/x.bin").has_value());
  std::vector<MountEntry> no_root = {{"/mnt", "ext4", "/dev/sdb1"}};
  EXPECT_FALSE(FindMount(no_root, "/home/x").has_value());
}

TEST(FindMount, ChildListedBeforeItsParentStillWins) {
  std::vector<MountEntry> mounts = ParseMountTable(ReadAll(kMounts + "/container/mounts"));
  EXPECT_EQ(FindMount(mounts, "/workspace/data/train-00001.parquet")->fs_type, "nfs");
  EXPECT_EQ(FindMount(mounts, "/workspace/code/train.py")->fs_type, "ext4");
}

TEST(IsUnder, OnComponentBoundaries) {
  EXPECT_TRUE(IsUnder("/mnt/data", "/mnt"));
  EXPECT_TRUE(IsUnder("/mnt", "/mnt"));
  EXPECT_FALSE(IsUnder("/mntx", "/mnt"));
  EXPECT_TRUE(IsUnder("/a", "/"));
  EXPECT_FALSE(IsUnder("a", "/"));
}

}  // namespace
}  // namespace sat::telemetry
