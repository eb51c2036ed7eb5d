// Where a small tandem::sgetrf call from host memory spends its time beside
// LAPACK's: whole calls at n = 16 and 32 (tandem with the automatic and the
// cpu backend, LAPACKE_sgetrf_work, sgetrf_), then the API's own steps timed
// alone, in the order a call takes them. Nanoseconds a call, the median of 9
// batches; with a GPU, also what the CUDA pointer queries cost on each kind of
// memory. Built as build/bench/tandem-small-call-parts (bench/CMakeLists.txt);
// optional argument: calls a batch (default 20000).
#include <lapacke.h>
#include <sys/mman.h>
#ifdef TANDEM_HAVE_CUDA
#include <cuda.h>  // the driver's types only: its entry point comes through the runtime
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cache_file.hpp"
#include "scheduler/cpu_backend.hpp"
#include "scheduler/gpu_backend.hpp"
#include "src/backend.hpp"
#include "src/checks.hpp"
#include "src/last_error.hpp"
#include "src/model_cache.hpp"
#include "tandem/tandem.hpp"

extern "C" void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);

namespace {

int calls_per_batch = 20000;
volatile long sink = 0;  // keeps results alive

// Median nanoseconds a call of `body` over 9 batches (after one untimed batch).
template <class Body>
double ns_per_call(Body&& body) {
    std::vector<double> ns;
    for (int batch = 0; batch < 10; ++batch) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls_per_batch; ++i) body();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (batch > 0) ns.push_back(s * 1e9 / calls_per_batch);
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
}

// `body` and `baseline` in alternating batches (9 each, after one of each
// untimed), so that drift of the machine's speed falls on both: the medians of
// each and the median of their differences, nanoseconds a call.
template <class Body, class Baseline>
void paired(const char* what, Body&& body, Baseline&& baseline) {
    std::vector<double> ns_body, ns_baseline, difference;
    const auto batch_ns = [](auto& f) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls_per_batch; ++i) f();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 /
               calls_per_batch;
    };
    for (int round = 0; round < 10; ++round) {
        const double b = batch_ns(baseline);
        const double t = batch_ns(body);
        if (round == 0) continue;
        ns_baseline.push_back(b);
        ns_body.push_back(t);
        difference.push_back(t - b);
    }
    for (auto* v : {&ns_body, &ns_baseline, &difference}) std::sort(v->begin(), v->end());
    std::printf("  %-44s %8.1f ns, LAPACKE %8.1f ns, difference %6.1f ns (%+.1f%%)\n", what,
                ns_body[4], ns_baseline[4], difference[4], 100.0 * difference[4] / ns_baseline[4]);
}

void row(const char* what, double ns) { std::printf("  %-58s %9.1f ns\n", what, ns); }

// Diagonally dominant n x n: no row swaps that grow entries, no singular pivot.
std::vector<float> test_matrix(int n) {
    std::vector<float> a(static_cast<size_t>(n) * n);
    unsigned state = 12345u + static_cast<unsigned>(n);
    for (float& x : a) {
        state = state * 1103515245u + 12345u;
        x = static_cast<float>((state >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    for (int i = 0; i < n; ++i) a[static_cast<size_t>(i) * n + i] += static_cast<float>(n);
    return a;
}

void whole_calls(int n) {
    const std::vector<float> source = test_matrix(n);
    std::vector<float> a(source);
    std::vector<int> ipiv(static_cast<size_t>(n));
    const auto restore = [&] { std::memcpy(a.data(), source.data(), source.size() * sizeof(float)); };
    std::printf("n = %d (each call after a copy of the matrix, timed with it)\n", n);
    row("copy of the matrix alone", ns_per_call([&] { restore(); sink = sink + static_cast<long>(a[1]); }));
    row("sgetrf_ (LAPACK, Fortran)", ns_per_call([&] {
            restore();
            int info = 0;
            sgetrf_(&n, &n, a.data(), &n, ipiv.data(), &info);
            sink = sink + info;
        }));
    row("LAPACKE_sgetrf_work", ns_per_call([&] {
            restore();
            sink = sink + LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, a.data(), n, ipiv.data());
        }));
    row("tandem::sgetrf, automatic backend, no report", ns_per_call([&] {
            restore();
            sink = sink + tandem::sgetrf(n, n, a.data(), n, ipiv.data());
        }));
    tandem::Report report;
    row("tandem::sgetrf, automatic backend, with a report", ns_per_call([&] {
            restore();
            sink = sink + tandem::sgetrf(n, n, a.data(), n, ipiv.data(), {}, &report);
        }));
    std::printf("    report: backend %s, device \"%s\", message \"%s\"\n",
                tandem::backend_name(report.backend), report.device.c_str(), report.message.c_str());
    const auto lapacke = [&] {
        restore();
        sink = sink + LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, a.data(), n, ipiv.data());
    };
    std::printf("  alternating with LAPACKE_sgetrf_work batches:\n");
    paired("tandem::sgetrf, automatic, no report", [&] {
            restore();
            sink = sink + tandem::sgetrf(n, n, a.data(), n, ipiv.data());
        }, lapacke);
    paired("tandem::sgetrf, automatic, with a report", [&] {
            restore();
            sink = sink + tandem::sgetrf(n, n, a.data(), n, ipiv.data(), {}, &report);
        }, lapacke);
    // The same call on arrays outside the brk heap (as a block over malloc's
    // mmap threshold or from another thread's arena would be): with a GPU the
    // host routine asks CUDA where each array lives.
    const size_t bytes = source.size() * sizeof(float) + ipiv.size() * sizeof(int);
    void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    float* mapped_a = static_cast<float*>(mapped);
    int* mapped_ipiv = reinterpret_cast<int*>(mapped_a + source.size());
    // Both on the same arrays: a page-aligned matrix alone changes LAPACK's time.
    paired("tandem::sgetrf, automatic, arrays mmap'd", [&] {
            std::memcpy(mapped_a, source.data(), source.size() * sizeof(float));
            sink = sink + tandem::sgetrf(n, n, mapped_a, n, mapped_ipiv, {}, &report);
        }, [&] {
            std::memcpy(mapped_a, source.data(), source.size() * sizeof(float));
            sink = sink + LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, mapped_a, n, mapped_ipiv);
        });
    munmap(mapped, bytes);
    tandem::Options cpu;
    cpu.backend = tandem::Backend::cpu;
    row("tandem::sgetrf, backend cpu, no report", ns_per_call([&] {
            restore();
            sink = sink + tandem::sgetrf(n, n, a.data(), n, ipiv.data(), cpu);
        }));
}

void api_steps() {
    using namespace tandem;
    const int n = 32;
    std::vector<float> a = test_matrix(n);
    std::vector<int> ipiv(static_cast<size_t>(n));
    const Options options;
    std::printf("the API's steps alone (usable GPUs: %d)\n", gpu_count());
    row("getenv(\"TANDEM_VERBOSE\")", ns_per_call([] {
            sink = sink + (std::getenv("TANDEM_VERBOSE") != nullptr);
        }));
    row("getenv(\"TANDEM_BACKEND\")", ns_per_call([] {
            sink = sink + (std::getenv("TANDEM_BACKEND") != nullptr);
        }));
    row("steady_clock::now", ns_per_call([] {
            sink = sink + std::chrono::steady_clock::now().time_since_epoch().count();
        }));
    const char* message =
        "automatic: the CPU, below n = 512, where LAPACK's and the GPU's calls measured as fast";
    Report report;
    row("Report reset (report = Report{}) and refilled", ns_per_call([&] {
            report = Report{};
            report.device = lapack_name();
            report.message = message;
            sink = sink + report.info;
        }));
    row("  of which the refill alone", ns_per_call([&] {
            report.device = lapack_name();
            report.message = message;
            sink = sink + report.info;
        }));
    row("  a fresh Report filled (allocates)", ns_per_call([&] {
            Report fresh;
            fresh.device = lapack_name();
            fresh.message = message;
            sink = sink + fresh.info;
        }));
    row("detail::check_getrf (arguments, where a and ipiv live)", ns_per_call([&] {
            sink = sink + detail::check_getrf(n, n, a.data(), n, ipiv.data(), options).info;
        }));
    row("detail::host_cannot_read (one array)", ns_per_call([&] {
            sink = sink + detail::host_cannot_read(a.data());
        }));
    row("detail::choose_backend (Solver's constructor)", ns_per_call([&] {
            sink = sink + static_cast<long>(detail::choose_backend(options).num_devices);
        }));
    row("detail::resolve_cache_dir(\"\") (GPU calls only)", ns_per_call([] {
            sink = sink + static_cast<long>(detail::resolve_cache_dir("").size());
        }));
    row("detail::known_crossovers (mutex, map; GPU machines)", ns_per_call([] {
            const auto known = detail::known_crossovers({0, 1, 0, 0});
            sink = sink + (known ? known->factor : -1);
        }));
    row("crossover message, concatenated", ns_per_call([] {
            const std::string m = "automatic: the CPU, below n = " + std::to_string(512) +
                                  ", where LAPACK's and the GPU's calls measured as fast";
            sink = sink + static_cast<long>(m.size());
        }));
    std::string reused;
    row("crossover message, appended to a reused string", ns_per_call([&] {
            reused.clear();
            reused.reserve(128);
            reused += "automatic: the CPU, below ";
            reused += "n = ";
            reused += std::to_string(512);
            reused += ", where LAPACK's and the GPU's calls measured as fast";
            sink = sink + static_cast<long>(reused.size());
        }));
    row("detail::set_last_error(\"\")", ns_per_call([] { detail::set_last_error(""); }));
#ifdef TANDEM_HAVE_CUDA
    if (gpu_count() == 0) return;
    // What the pointer checks cost where they ask CUDA: the runtime's query
    // (what tandem calls) and the driver's narrower one, on each kind of memory.
    void* mapped = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* device = nullptr;
    void* pinned = nullptr;
    if (mapped == MAP_FAILED || cudaMalloc(&device, 4096) != cudaSuccess ||
        cudaMallocHost(&pinned, 4096) != cudaSuccess) {
        std::fprintf(stderr, "allocations for the pointer queries failed\n");
        std::exit(1);
    }
    using PointerGetAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &entry, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        std::fprintf(stderr, "no cuPointerGetAttribute\n");
        std::exit(1);
    }
    const auto driver_query = reinterpret_cast<PointerGetAttribute>(entry);
    const std::pair<const char*, void*> kinds[] = {
        {"heap", a.data()}, {"mmap", mapped}, {"cudaMallocHost", pinned}, {"cudaMalloc", device}};
    for (const auto& [kind, pointer] : kinds) {
        const std::string runtime = std::string("cudaPointerGetAttributes, ") + kind;
        row(runtime.c_str(), ns_per_call([p = pointer] {
                cudaPointerAttributes attributes{};
                sink = sink + cudaPointerGetAttributes(&attributes, p) + attributes.type;
            }));
        (void)cudaGetLastError();
        const std::string driver = std::string("cuPointerGetAttribute(MEMORY_TYPE), ") + kind;
        row(driver.c_str(), ns_per_call([p = pointer, driver_query] {
                unsigned type = 0;
                sink = sink + driver_query(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           reinterpret_cast<CUdeviceptr>(p)) + type;
            }));
        const std::string tandem_check = std::string("detail::host_cannot_read, ") + kind;
        row(tandem_check.c_str(), ns_per_call([p = pointer] { sink = sink + detail::host_cannot_read(p); }));
    }
    cudaFree(device);
    cudaFreeHost(pinned);
    munmap(mapped, 4096);
#endif
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) calls_per_batch = std::max(1, std::atoi(argv[1]));
    std::printf("tandem small-call parts, %d calls a batch, median of 9 batches\n", calls_per_batch);
    whole_calls(1);  // LAPACK's own call costs next to nothing: the difference is the API's
    whole_calls(16);
    whole_calls(32);
    api_steps();
    return sink == 42 ? 1 : 0;
}
