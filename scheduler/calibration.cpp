#include "scheduler/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "scheduler/blas_threads.hpp"
#include "scheduler/cpu_panel.hpp"
#include "scheduler/host_buffer.hpp"

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Seconds of `work` (which must complete before returning), median of `repeats`,
// with `prepare` (untimed) before each run.
template <class Prepare, class Work>
double time_median(int repeats, Prepare&& prepare, Work&& work) {
    std::vector<double> seconds;
    for (int r = 0; r < std::max(repeats, 1); ++r) {
        prepare();
        const auto t0 = Clock::now();
        work();
        seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return median(seconds);
}

// Uniform values in [-1, 1) from a fixed linear congruential sequence.
void fill_random(float* data, int64_t count) {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < count; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = static_cast<float>((state >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
    }
}

}  // namespace

double interference_share(double update_alone, double panel_alone, double both) {
    const double shorter = std::min(update_alone, panel_alone);
    if (!(shorter > 0.0)) return 0.0;
    return std::clamp((both - std::max(update_alone, panel_alone)) / shorter, 0.0, 1.0);
}

PerformanceModel calibrate(Device& device, PanelMethod method, const CalibrationGrid& grid,
                           const std::string& fingerprint) {
    PerformanceModel model;
    model.fingerprint = fingerprint;
    const int max_width = *std::max_element(grid.widths.begin(), grid.widths.end());
    const int64_t max_rows = *std::max_element(grid.panel_rows.begin(), grid.panel_rows.end());
    const int64_t max_size =
        *std::max_element(grid.update_sizes.begin(), grid.update_sizes.end());
    const int64_t host_rows = std::max(max_rows, max_size + max_width);
    HostBuffer source(device, host_rows * max_width);
    fill_random(source.data(), host_rows * max_width);

    // The CPU panel, as the factorization runs it: OpenBLAS held single-threaded
    // when our own OpenMP panel runs, and inv(L11) formed after it (for U12 by
    // GEMM: the default). At 1024 columns the inverse alone takes milliseconds.
    {
        std::optional<SingleThreadedBlas> single_threaded;
        if (method != PanelMethod::lapack) single_threaded.emplace();
        std::vector<float> panel(static_cast<size_t>(max_rows * max_width));
        std::vector<float> inverse(static_cast<size_t>(max_width) * max_width);
        std::vector<int> ipiv(static_cast<size_t>(max_width));
        for (int64_t rows : grid.panel_rows)
            for (int width : grid.widths) {
                if (width > rows) continue;
                const double s = time_median(
                    grid.repeats,
                    [&] {
                        for (int j = 0; j < width; ++j)
                            std::memcpy(&panel[j * rows], source.data() + j * host_rows,
                                        sizeof(float) * rows);
                    },
                    [&] {
                        // As the steps run it (LuSteps::factor_panel_on_cpu_or_collect).
                        const int team = cpu_panel_team_size();
                        factor_panel(rows, width, panel.data(), rows, ipiv.data(), method, team);
                        invert_unit_lower(width, panel.data(), rows, inverse.data(), width, team);
                    });
                model.cpu_panels.push_back({rows, width, s});
            }
    }

    // The device's panel and the bandwidth of panel-sized transfers.
    HostBuffer pivots(device, max_width + 1);
    int* const pivot_ints = reinterpret_cast<int*>(pivots.data());
    device.allocate(max_rows, max_width, max_width);
    auto upload_panel = [&](int64_t rows, int width) {
        device.upload(Queue::transfer, source.data(), host_rows, 0, 0, rows, width);
        device.synchronize();
    };
    for (int64_t rows : grid.panel_rows)
        for (int width : grid.widths) {
            if (width > rows) continue;
            const double s = time_median(
                grid.repeats, [&] { upload_panel(rows, width); },
                [&] {
                    device.factor_panel(Queue::transfer, 0, 0, rows, width, pivot_ints);
                    device.synchronize(device.record(Queue::transfer));
                });
            model.device_panels.push_back({rows, width, s});
        }
    const double up = time_median(
        grid.repeats, [] {}, [&] { upload_panel(max_rows, max_width); });
    HostBuffer back(device, max_rows * max_width);
    const double down = time_median(
        grid.repeats, [] {},
        [&] {
            device.download(Queue::transfer, back.data(), max_rows, 0, 0, max_rows, max_width);
            device.synchronize();
        });
    model.transfer_bytes_per_second = 4.0 * double(max_rows) * max_width / (0.5 * (up + down));
    // The caller's pageable memory: the host copies it through pinned buffers.
    {
        std::vector<float> pageable(static_cast<size_t>(max_rows * max_width), 0.5f);
        const double in = time_median(grid.repeats, [] {}, [&] {
            device.upload(Queue::copy, pageable.data(), max_rows, 0, 0, max_rows, max_width);
            device.synchronize();
        });
        const double out = time_median(grid.repeats, [] {}, [&] {
            device.download(Queue::copy, pageable.data(), max_rows, 0, 0, max_rows, max_width);
            device.synchronize();
        });
        model.host_copy_bytes_per_second =
            4.0 * double(max_rows) * max_width / (0.5 * (in + out));
    }
    // A step issues some ten operations and waits for the host once or twice.
    model.step_overhead_seconds = 4.0 * time_median(grid.repeats, [] {}, [&] {
        device.synchronize(device.record(Queue::compute));
    });

    // The trailing update: size x size -= (size x width) (width x size), and
    // beside it, once, a device panel of `size` rows in the storage's first columns.
    const int middle_width = grid.widths[grid.widths.size() / 2];
    const int64_t middle_size = grid.update_sizes[grid.update_sizes.size() / 2];
    for (int64_t size : grid.update_sizes) {
        device.allocate(size + max_width, max_width + size, max_width);
        for (int width : grid.widths) {
            device.receive_panel(Queue::transfer, source.data(), host_rows, size + width, width,
                                 nullptr, 0);
            device.synchronize();
            auto update = [&] {
                device.update_trailing(Queue::compute, 0, width, size, max_width, size);
            };
            const double s = time_median(grid.repeats, [] {}, [&] {
                update();
                device.synchronize(device.record(Queue::compute));
            });
            model.updates.push_back({size, width, s});
            if (size != middle_size || width != middle_width) continue;
            auto reset_panel = [&] {
                device.upload(Queue::transfer, source.data(), host_rows, 0, 0, size, width);
                device.synchronize();
            };
            const double panel_alone = time_median(
                grid.repeats, reset_panel,
                [&] {
                    device.factor_panel(Queue::transfer, 0, 0, size, width, pivot_ints);
                    device.synchronize(device.record(Queue::transfer));
                });
            const double both = time_median(
                grid.repeats, reset_panel,
                [&] {
                    update();
                    device.factor_panel(Queue::transfer, 0, 0, size, width, pivot_ints);
                    device.synchronize();
                });
            model.device_panel_interference = interference_share(s, panel_alone, both);
        }
    }
    // The device's panel routine on the whole matrix: the matrix is filled
    // from the random block in column blocks, each from another row offset.
    for (int64_t n : grid.whole_sizes) {
        if (n <= 0 || n > host_rows - 64) continue;
        HostBuffer whole_pivots(device, n + 1);
        try {
            device.allocate(n, n, 1, static_cast<int>(n));  // about 4 n^2 floats on a GPU
        } catch (const Error& e) {
            if (e.code() != TANDEM_ERROR_OUT_OF_MEMORY) throw;
            break;  // a plan never takes a size without a measurement
        }
        auto fill = [&] {
            for (int64_t c = 0; c < n; c += max_width) {
                const float* block = source.data() + (c / max_width) % 64;
                device.upload(Queue::transfer, block, host_rows, 0, c, n,
                              std::min<int64_t>(max_width, n - c));
            }
            device.synchronize();
        };
        const double s = time_median(grid.repeats, fill, [&] {
            device.factor_panel(Queue::transfer, 0, 0, n, static_cast<int>(n),
                                reinterpret_cast<int*>(whole_pivots.data()));
            device.synchronize(device.record(Queue::transfer));
        });
        model.device_whole.push_back({n, s});
    }
    return model;
}

}  // namespace tandem
