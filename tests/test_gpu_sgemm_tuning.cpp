// The SGEMM menu's names, the shape buckets, the tuning table's text form, the
// tuner's cache file (round trip; corrupt, foreign and stale files give the
// defaults and never throw) and a short tuning run on the GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu/sgemm_tuner.hpp"
#include "gpu/sgemm_tuning_cache.hpp"
#include "gpu/sgemm_variants.hpp"
#include "tests/sgemm_testbed.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
using gpu::SgemmBucket;
using gpu::SgemmTuningTable;

TEST(SgemmMenu, NamesAreProceduralAndUnique) {
    std::vector<std::string> names;
    for (const gpu::SgemmVariant& variant : gpu::sgemm_variants()) {
        if (variant.shape.block_m > 0) {
            EXPECT_EQ(variant.name, gpu::sgemm_rm_variant_name(variant.shape));
        }
        EXPECT_EQ(std::count(names.begin(), names.end(), variant.name), 0) << variant.name;
        names.push_back(variant.name);
    }
    for (const char* special : {gpu::kCublasVariant, gpu::kCublasLtVariant, gpu::kTallSkinnyVariant,
                                gpu::kDefaultVariant, gpu::kAnyAlignmentVariant})
        EXPECT_NE(gpu::find_sgemm_variant(special), nullptr) << special;
    EXPECT_EQ(gpu::find_sgemm_variant(gpu::kAnyAlignmentVariant)->shape.vector_loads, false);
}

TEST(SgemmBuckets, TheTunedShapeOfABucketLiesInIt) {
    for (const SgemmBucket& bucket : gpu::all_sgemm_buckets()) {
        const gpu::SgemmShape s = gpu::sgemm_bucket_shape(bucket);
        const SgemmBucket back = gpu::sgemm_bucket(s.m, s.n, s.k);
        EXPECT_EQ(gpu::sgemm_bucket_label(back), gpu::sgemm_bucket_label(bucket));
    }
    // The LU's shapes: trailing update, look-ahead, inv(L11) product.
    EXPECT_EQ(gpu::sgemm_bucket_label(gpu::sgemm_bucket(32704, 32704, 64)), "square k<=64 size<=32768");
    EXPECT_EQ(gpu::sgemm_bucket_label(gpu::sgemm_bucket(32256, 512, 512)), "tall k<=512 size<=32768");
    EXPECT_EQ(gpu::sgemm_bucket_label(gpu::sgemm_bucket(256, 40000, 256)), "wide k<=256 size>32768");
}

TEST(SgemmTable, DefaultsNameVariantsOfTheMenuInEveryBucket) {
    const SgemmTuningTable& defaults = SgemmTuningTable::sm90_defaults();
    for (const SgemmBucket& bucket : gpu::all_sgemm_buckets())
        EXPECT_NE(gpu::find_sgemm_variant(defaults.variant(bucket)), nullptr)
            << gpu::sgemm_bucket_label(bucket);
}

TEST(SgemmTable, TextFormRoundTripsAndRejectsGarbage) {
    SgemmTuningTable table = SgemmTuningTable::sm90_defaults();
    table.set_variant({gpu::SgemmShapeKind::wide, 2, 3}, gpu::kCublasVariant);
    SgemmTuningTable back = SgemmTuningTable::sm90_defaults();
    std::string error;
    ASSERT_TRUE(back.apply_text(table.to_text(), error)) << error;
    EXPECT_EQ(back, table);
    SgemmTuningTable untouched = SgemmTuningTable::sm90_defaults();
    EXPECT_FALSE(untouched.apply_text("square k<=64 size<=2048 = cublas\nnot a line\n", error));
    EXPECT_EQ(untouched, SgemmTuningTable::sm90_defaults());  // all or nothing
    // A variant that is no longer in the menu leaves that bucket alone.
    ASSERT_TRUE(untouched.apply_text("square k<=64 size<=2048 = sgemm_rm_old_name\n", error)) << error;
    EXPECT_EQ(untouched, SgemmTuningTable::sm90_defaults());
}

class SgemmCacheFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("tandem-sgemm-cache-" + std::to_string(test_seed()));
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    void write(const std::string& path, const std::string& text) {
        fs::create_directories(fs::path(path).parent_path());
        std::ofstream(path, std::ios::binary) << text;
    }
    fs::path dir_;
    const gpu::SgemmDeviceKey key_{"NVIDIA H200", 132, 13000};
    const SgemmTuningTable& defaults_ = SgemmTuningTable::sm90_defaults();
};

TEST_F(SgemmCacheFile, RoundTrip) {
    SgemmTuningTable table = defaults_;
    table.set_variant({gpu::SgemmShapeKind::square, 0, 4}, gpu::kCublasVariant);
    const std::string path = gpu::sgemm_cache_path(dir_.string(), key_);
    std::string error, why;
    ASSERT_TRUE(gpu::save_sgemm_tuning(path, key_, table, error)) << error;
    const auto loaded = gpu::load_sgemm_tuning(path, key_, defaults_, why);
    ASSERT_TRUE(loaded.has_value()) << why;
    EXPECT_EQ(*loaded, table);
}

TEST_F(SgemmCacheFile, MissingCorruptOrForeignFilesGiveNothing) {
    const std::string path = gpu::sgemm_cache_path(dir_.string(), key_);
    std::string why, error;
    EXPECT_FALSE(gpu::load_sgemm_tuning(path, key_, defaults_, why).has_value());  // no file
    write(path, std::string("\x7f\x45LF\0\0garbage\n\xff\xfe", 16));
    EXPECT_FALSE(gpu::load_sgemm_tuning(path, key_, defaults_, why).has_value()) << "binary junk";
    ASSERT_TRUE(gpu::save_sgemm_tuning(path, key_, defaults_, error)) << error;
    std::ofstream(path, std::ios::app) << "square k<=64 size<=2048 = \n";
    EXPECT_FALSE(gpu::load_sgemm_tuning(path, key_, defaults_, why).has_value()) << "bad line";
    const gpu::SgemmDeviceKey other{"NVIDIA H100 80GB HBM3", 132, 13000};
    ASSERT_TRUE(gpu::save_sgemm_tuning(path, other, defaults_, error)) << error;
    EXPECT_FALSE(gpu::load_sgemm_tuning(path, key_, defaults_, why).has_value()) << "other GPU";
    const gpu::SgemmDeviceKey older_cuda{"NVIDIA H200", 132, 12080};
    ASSERT_TRUE(gpu::save_sgemm_tuning(path, older_cuda, defaults_, error)) << error;
    EXPECT_FALSE(gpu::load_sgemm_tuning(path, key_, defaults_, why).has_value()) << "other CUDA";
    EXPECT_NE(gpu::sgemm_cache_path(dir_.string(), key_), gpu::sgemm_cache_path(dir_.string(), other));
}

// `tandem-bench --tune` stores its table where the library looks for it.
TEST(SgemmCacheDirectory, IsTheLibrarysCacheDirectory) {
    {
        ScopedEnvironmentVariable xdg("XDG_CACHE_HOME", "/tmp/tandem-xdg-test");
        EXPECT_EQ(gpu::default_sgemm_cache_dir(), "/tmp/tandem-xdg-test/tandem");
    }
    ScopedEnvironmentVariable no_xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnvironmentVariable home("HOME", "/tmp/tandem-home-test");
    EXPECT_EQ(gpu::default_sgemm_cache_dir(), "/tmp/tandem-home-test/.cache/tandem");
    ScopedEnvironmentVariable no_home("HOME", nullptr);
    const char* tmp = std::getenv("TMPDIR");
    EXPECT_EQ(gpu::default_sgemm_cache_dir(), std::string(tmp && *tmp ? tmp : "/tmp") +
                                                  "/tandem-cache-" + std::to_string(getuid()));
}

TEST_F(SgemmCacheFile, UnwritableDirectoryIsAnErrorNotACrash) {
    write((dir_ / "file").string(), "x");
    std::string error;
    EXPECT_FALSE(gpu::save_sgemm_tuning((dir_ / "file" / "sub" / "t.txt").string(), key_, defaults_, error));
    EXPECT_FALSE(error.empty());
}

TEST_F(SgemmGpuTest, ShortTuningRunPicksRunnableWinnersAndIsFoundAgain) {
    gpu::SgemmTunerOptions options;
    options.buckets = {{gpu::SgemmShapeKind::square, 0, 0}, {gpu::SgemmShapeKind::tall, 0, 0}};
    options.repeats = 1;
    int lines = 0;
    options.progress = [&](const std::string&) { ++lines; };
    const gpu::SgemmTuningResult result = gpu::tune_sgemm(options);
    EXPECT_EQ(lines, 2);
    ASSERT_EQ(result.buckets.size(), 2u);
    for (const gpu::SgemmBucketTiming& timing : result.buckets) {
        EXPECT_NE(gpu::find_sgemm_variant(timing.winner), nullptr) << timing.note;
        EXPECT_GE(timing.candidates.size(), 6u);
        EXPECT_EQ(result.table.variant(timing.bucket), timing.winner);
    }
    const fs::path dir = fs::temp_directory_path() / ("tandem-sgemm-tune-" + std::to_string(seed_));
    std::string error, source;
    ASSERT_TRUE(gpu::save_sgemm_tuning(gpu::sgemm_cache_path(dir.string(), result.key), result.key,
                                       result.table, error)) << error;
    EXPECT_EQ(gpu::load_sgemm_table_for_current_device(dir.string(), &source), result.table) << source;
    fs::remove_all(dir);
    EXPECT_EQ(gpu::load_sgemm_table_for_current_device((dir / "none").string(), &source),
              SgemmTuningTable::sm90_defaults());
}

}  // namespace
}  // namespace tandem::test
